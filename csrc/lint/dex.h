/*
** dex.h
** A dex file (Dalvik executable, versions 035 to 039) read in place for
** the lint rules: its classes, and per method its instructions (opcode,
** first register, jump target, resolved method/field/type), try blocks
** with their handlers, and line numbers and local variables from the
** debug info (its START_LOCAL entries; parameters' names are not read); and
** the annotations of each class and method that are not the system's
** (visibility BUILD, kept by some compilers, such as Android's
** @SuppressLint; and RUNTIME), each as its type and the strings of its
** "value" element; of the system's, a class's EnclosingMethod. Every index,
** offset and count is checked against the bytes.
*/

#if !defined(lint_dex_h)
#define lint_dex_h

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"

typedef struct dx_Insn {
  uint32_t pc;          /* in 16-bit code units */
  uint16_t op;          /* the opcode (a payload's: 0x100, 0x200, 0x300) */
  int32_t reg;          /* register A, for the formats that have one; -1 */
  int32_t src;          /* register B of a two-register format (12x, 22x, 32x: a move's source); -1 */
  uint8_t nargs;        /* an invoke's argument registers: how many */
  uint8_t range;        /* 1: they are args[0], args[0] + 1, ... (3rc, 4rcc); 0: args[0..nargs) (35c, 45cc) */
  uint16_t args[5];
  const unsigned char *at;  /* the instruction's bytes (a switch payload's targets are read from them) */
  int32_t branch;       /* a jump's target; -1 */
  int64_t ref;          /* a method, field, type or string index (by kind); -1 */
  uint32_t line;        /* 0: unknown */
} dx_Insn;

typedef struct dx_Try {
  uint32_t start, end, handler;
  int64_t type;         /* type index; -1 catches everything */
} dx_Try;

typedef struct dx_Local {
  uint32_t start, end, reg;
  int64_t name, type;   /* string and type indexes; -1: none */
} dx_Local;

/* an annotation_item of visibility BUILD or RUNTIME: its type, and the
   strings its "value" element holds (a string, or an array of them):
   string indexes values[first .. first + count) */
typedef struct dx_Annotation {
  uint32_t type;        /* type index */
  uint8_t runtime;      /* 1: VISIBILITY_RUNTIME; 0: VISIBILITY_BUILD */
  size_t first, count;
} dx_Annotation;

typedef struct dx_Method {
  uint32_t method_idx, access;
  size_t anno_first, nannos;  /* its annotations: the file's annotations[anno_first .. + nannos) */
  uint32_t registers, ins;  /* the code item's register count, and how many of the last ones hold the arguments */
  dx_Insn *insns;  size_t ninsns;
  dx_Try *tries;   size_t ntries;
  dx_Local *locals; size_t nlocals;
  int has_code;
} dx_Method;

typedef struct dx_Class {
  uint32_t class_idx, access, super_idx, source_idx;  /* 0xFFFFFFFF: none */
  dx_Method *methods;
  size_t nmethods, ndirect;   /* the direct methods first, then the virtual ones; each list by method index */
  size_t anno_first, nannos;  /* the class's own annotations */
  uint32_t enclosing_method;  /* a local or anonymous class's method (dalvik/annotation/EnclosingMethod); 0xFFFFFFFF */
} dx_Class;

typedef struct dx_File {
  const unsigned char *p;
  size_t n;
  unsigned version;
  uint32_t nstrings, strings_off, ntypes, types_off, nprotos, protos_off, nfields, fields_off,
           nmethods, methods_off;
  dx_Class *classes;
  size_t nclasses;
  dx_Annotation *annotations;  /* every annotation read, the classes' and the methods' */
  size_t nannotations, annotations_cap;
  uint32_t *values;            /* the annotations' value strings (string indexes) */
  size_t nvalues, values_cap;
  size_t visits;               /* annotation set entries visited (at most the file's size: sets are shared) */
} dx_File;

/* read a dex file; on failure a message with the byte offset */
sift_Status dx_parse (dx_File *d, const unsigned char *p, size_t n, sift_Error *err);
void dx_free (dx_File *d);

/* a string's MUTF-8 text; 0 if idx is out of range or damaged */
int dx_string (const dx_File *d, uint32_t idx, const unsigned char **s, size_t *len);
/* a type's descriptor (Lcom/foo/Bar;) */
int dx_type (const dx_File *d, uint32_t idx, const unsigned char **s, size_t *len);
/* a method: its class's type index, name string index, proto index */
int dx_method (const dx_File *d, uint32_t idx, uint32_t *class_idx, uint32_t *name_idx, uint32_t *proto_idx);
/* a field: its class's type index and name string index */
int dx_field (const dx_File *d, uint32_t idx, uint32_t *class_idx, uint32_t *name_idx);
/* a proto: return type index, and its parameters' type list (count, u2 type indexes) */
int dx_proto (const dx_File *d, uint32_t idx, uint32_t *return_idx, uint32_t *nparams,
              const unsigned char **params);
/* an opcode's mnemonic ("invoke-interface"); and what its index names:
   'm' method, 'f' field, 't' type, 's' string, 0 none */
const char *dx_opname (unsigned op);
int dx_refkind (unsigned op);

#endif
