/*
** classfile.h
** A Java class file (JVMS 4, versions 45 to 65: Java 1.1 to 21) read in
** place for the lint rules: the constant pool's entries, and per method
** its instructions (opcode, local variable, jump target, pool reference),
** exception table, line numbers and local variables; and the annotations
** of the class and of each method (RuntimeInvisibleAnnotations: class
** retention, such as Android's @SuppressLint; RuntimeVisibleAnnotations),
** each as its type and the strings of its "value" element; and a local or
** anonymous class's EnclosingMethod. Every count and
** offset is checked against the bytes; arrays are sized by what the bytes
** can hold, never by an unchecked count.
*/

#if !defined(lint_classfile_h)
#define lint_classfile_h

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"

typedef struct cf_Str { const unsigned char *s; size_t n; } cf_Str;  /* modified UTF-8, in the file */

typedef struct cf_Insn {
  uint32_t pc;
  uint16_t op;        /* the JVM opcode (wide's: the widened one) */
  uint16_t ref;       /* a constant pool index (invoke, field, new, ldc...); 0 */
  int32_t var;        /* the local variable a load, store, iinc or ret uses (multianewarray: its dimensions); -1 */
  int32_t branch;     /* a jump's target pc (a switch's: its default); -1 */
} cf_Insn;

typedef struct cf_Try {
  uint32_t start, end, handler;
  uint16_t type;      /* the caught class's pool index; 0 catches everything */
} cf_Try;

typedef struct cf_Line { uint32_t pc, line; } cf_Line;

typedef struct cf_Local {
  uint32_t start, length;
  uint16_t name, desc, index;
} cf_Local;

/* an annotation (JVMS 4.7.16): its type, and the strings its "value"
   element holds (a String, or an array of them): strings[first .. first + count) */
typedef struct cf_Annotation {
  uint16_t type;      /* a Utf8 index: the type's descriptor (Landroid/annotation/SuppressLint;) */
  uint8_t runtime;    /* 1: RuntimeVisibleAnnotations; 0: RuntimeInvisibleAnnotations (class retention) */
  size_t first, count;
} cf_Annotation;

typedef struct cf_Method {
  uint16_t access, name, desc;
  size_t anno_first, nannos;  /* its annotations: the class's annotations[anno_first .. + nannos) */
  int has_code;
  const unsigned char *code; size_t code_len;  /* the bytecode, in the file (switch tables read from it) */
  cf_Insn *insns;   size_t ninsns;
  cf_Try *tries;    size_t ntries;
  cf_Line *lines;   size_t nlines;
  cf_Local *locals; size_t nlocals;
} cf_Method;

typedef struct cf_Class {
  const unsigned char *p;
  size_t n;
  uint16_t minor, major, access, this_class, super_class, source;
  uint16_t ninterfaces;     /* the interfaces' pool indexes: u2 each, at interfaces */
  size_t interfaces;
  uint32_t *pool;           /* each entry's offset; 0 for the unusable slots */
  size_t pool_count;
  cf_Method *methods;
  size_t nmethods;
  cf_Annotation *annotations;  /* every annotation read, the methods' and the class's */
  size_t nannotations, annotations_cap;
  uint16_t *strings;           /* the annotations' value strings (Utf8 indexes) */
  size_t nstrings, strings_cap;
  size_t anno_first, nannos;   /* the class's own annotations */
  uint16_t enclosing_class, enclosing_method;  /* EnclosingMethod (4.7.7): a Class and a NameAndType index; 0 */
} cf_Class;

/* read a class file; on failure a message with the byte offset */
sift_Status cf_parse (cf_Class *c, const unsigned char *p, size_t n, sift_Error *err);
void cf_free (cf_Class *c);

/* a Utf8 entry's text; 0 if index is not one */
int cf_utf8 (const cf_Class *c, uint16_t index, cf_Str *out);
/* a Class entry's name (com/foo/Bar, or [Lcom/foo/Bar; for arrays) */
int cf_class_name (const cf_Class *c, uint16_t index, cf_Str *out);
/* the k-th interface's pool index (k < c->ninterfaces) */
uint16_t cf_interface (const cf_Class *c, size_t k);
/* a Fieldref, Methodref or InterfaceMethodref: owner class, name, descriptor */
int cf_member (const cf_Class *c, uint16_t index, cf_Str *owner, cf_Str *name, cf_Str *desc);
/* how many cases the switch at pc has; the k-th one's target into *target when k is one of them */
size_t cf_switch_target (const cf_Method *m, uint32_t pc, size_t k, uint32_t *target);
/* a NameAndType entry's name and descriptor */
int cf_name_and_type (const cf_Class *c, uint16_t index, cf_Str *name, cf_Str *desc);
/* an InvokeDynamic entry's name and descriptor (what the call site takes and gives) */
int cf_dynamic (const cf_Class *c, uint16_t index, cf_Str *name, cf_Str *desc);
/* an opcode's mnemonic ("invokeinterface"); NULL for none */
const char *cf_opname (unsigned op);

#endif
