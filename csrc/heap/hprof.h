/*
** hprof.h
** The HPROF decoder and its compact heap index: dense object numbers
** (objects sorted by id), file offsets into the mapping, classes with
** flattened instance-field layouts, strings, roots, threads and stack
** traces. Object data stays in the mapping and is read on demand.
** Pure C (malloc'd arrays owned by hp_Heap; hp_free releases them), shared
** by the Lua binding (lheap.c) and the fuzz harness.
*/

#if !defined(sift_hprof_h)
#define sift_hprof_h

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"
#include "core/idmap.h"

/* basic types of HPROF fields and array elements */
enum {
  HP_OBJECT = 2, HP_BOOLEAN = 4, HP_CHAR = 5, HP_FLOAT = 6, HP_DOUBLE = 7,
  HP_BYTE = 8, HP_SHORT = 9, HP_INT = 10, HP_LONG = 11
};

/*
** {======================================================
** The format's tags: the one place they are spelled (HPROF.md). Every
** reader and writer (hprof.c, crunch.c, bmd.c, the Lua bindings) names
** them from here.
** =======================================================
*/

/* top-level records: u1 tag, u4 time delta, u4 body length, body */
enum {
  HP_TAG_STRING = 0x01, HP_TAG_LOAD_CLASS = 0x02, HP_TAG_UNLOAD_CLASS = 0x03,
  HP_TAG_STACK_FRAME = 0x04, HP_TAG_STACK_TRACE = 0x05,
  HP_TAG_START_THREAD = 0x0A, HP_TAG_HEAP_DUMP = 0x0C,
  HP_TAG_HEAP_DUMP_SEGMENT = 0x1C, HP_TAG_HEAP_DUMP_END = 0x2C
};

/* the sub-records of a heap dump's body: GC roots (1.0.2, then Android's
   1.0.3 kinds), objects (the byte at an object's offset) and Android's
   heap switch */
enum {
  HP_ROOT_UNKNOWN = 0xFF, HP_ROOT_JNI_GLOBAL = 0x01, HP_ROOT_JNI_LOCAL = 0x02,
  HP_ROOT_JAVA_FRAME = 0x03, HP_ROOT_NATIVE_STACK = 0x04,
  HP_ROOT_STICKY_CLASS = 0x05, HP_ROOT_THREAD_BLOCK = 0x06,
  HP_ROOT_MONITOR_USED = 0x07, HP_ROOT_THREAD_OBJECT = 0x08,
  HP_ROOT_INTERNED_STRING = 0x89, HP_ROOT_FINALIZING = 0x8A,
  HP_ROOT_DEBUGGER = 0x8B, HP_ROOT_REFERENCE_CLEANUP = 0x8C,
  HP_ROOT_VM_INTERNAL = 0x8D, HP_ROOT_JNI_MONITOR = 0x8E,
  HP_ROOT_UNREACHABLE = 0x90,
  HP_CLASS_DUMP = 0x20, HP_INSTANCE_DUMP = 0x21, HP_OBJ_ARRAY_DUMP = 0x22,
  HP_PRIM_ARRAY_DUMP = 0x23, HP_PRIM_ARRAY_NODATA = 0xC3,
  HP_HEAP_DUMP_INFO = 0xFE
};

/* what a sub-record's u4 fields are (hp_SubRecord.flags) */
enum {
  HP_ROOT = 1,        /* a GC root: its first id is the object held */
  HP_THREAD = 2,      /* a u4 thread serial follows the ids */
  HP_FRAME = 4,       /* ... then a u4 frame number (-1: none) */
  HP_TRACE = 8        /* ... or a u4 stack trace serial */
};

/*
** A sub-record tag's name and layout: after the tag, `ids` identifiers
** then `bytes` more bytes (JNI_GLOBAL: the object and the reference;
** HEAP_DUMP_INFO: u4 heap, then its name's string id). Objects but
** PRIM_ARRAY_NODATA are sized by their content: ids = 0. A tag that is
** not in the format has no name.
*/
typedef struct hp_SubRecord {
  const char *name;   /* the root kinds' names are sift's API */
  uint8_t ids, bytes;
  uint8_t flags;
} hp_SubRecord;

extern const hp_SubRecord hp_subrecords[256];

/* }====================================================== */

/* the Android heaps objects are tagged with (HEAP_DUMP_INFO) */
enum { HP_HEAP_DEFAULT = 0, HP_HEAP_APP = 'A', HP_HEAP_IMAGE = 'I',
       HP_HEAP_ZYGOTE = 'Z', HP_HEAP_JIT = 'J', HP_HEAP_OTHER = 1 };


/* id -> offset: of an object's sub-record tag byte, or of a top-level
   record's body (strings, frames, traces, LOAD_CLASS) */
typedef struct hp_Idx {
  uint64_t id;
  uint64_t off;
} hp_Idx;

/* where HEAP_DUMP_INFO switched the heap later objects belong to */
typedef struct hp_Switch {
  uint64_t off;
  uint32_t heap;
} hp_Switch;

/* one instance field of a class's flattened layout */
typedef struct hp_Field {
  uint64_t name;    /* string id */
  uint32_t offset;  /* in the instance data */
  uint32_t owner;   /* index of the declaring class */
  uint8_t type;
} hp_Field;

typedef struct hp_Class {
  uint64_t id, super_id, loader_id;
  uint64_t name;          /* string id from LOAD_CLASS; 0 when none */
  uint64_t off;           /* offset of the CLASS_DUMP tag */
  uint64_t statics_off;   /* offset of the u2 static count */
  uint64_t fields_off;    /* offset of the u2 instance field count */
  int64_t super;          /* class index, -1 when none (or missing) */
  uint32_t instance_size; /* as the dump states it */
  uint32_t nstatics, nfields;
  uint32_t flat, nflat;   /* the layout: heap->fields[flat .. flat+nflat) */
  uint32_t data_size;     /* instance data bytes the layout describes */
  uint32_t serial;        /* LOAD_CLASS serial, 0 when none */
} hp_Class;

typedef struct hp_Root {
  uint64_t id;
  uint32_t thread;  /* thread serial (0 when the kind has none) */
  uint32_t frame;   /* frame number, or stack trace serial for threads */
  uint8_t kind;     /* the sub-record tag */
} hp_Root;


typedef struct hp_Thread {
  uint32_t serial, trace;   /* thread serial, stack trace serial */
  uint64_t object;          /* java.lang.Thread id (0 when unknown) */
  uint64_t name;            /* string id from START_THREAD, 0 when none */
} hp_Thread;

#define HP_MAXWARN 16

typedef struct hp_Heap {
  const unsigned char *p;   /* the whole file, mapped */
  size_t n;
  int idsize;
  char version[8];          /* "1.0.2" */
  uint64_t timestamp;       /* ms */
  uint64_t header_size;
  /* objects sorted by id: the index of an object is its dense number.
     Ids are kept as 32-bit keys, (id - id_base) >> id_shift, when every id
     fits (aligned addresses usually do), else whole; record offsets as 32
     bits when the file is under 4 GiB, else whole: 8 bytes per object in
     the usual case, at most 16. While the file is read, ids holds the ids
     in file order and offs32 or offs64 their offsets. */
  uint32_t *keys32;
  uint64_t *keys64;
  uint32_t *offs32;
  uint64_t *offs64;
  uint64_t id_base;
  int id_shift;
  uint64_t *ids;
  uint64_t nobjs;
  uint64_t count[5];        /* classes, instances, object arrays,
                               primitive arrays (with and without data) */
  /* Android heap tags: objects from heaps[i].off on are in heaps[i].heap */
  hp_Switch *heaps;
  uint64_t nheaps;
  /* classes sorted by id, and their flattened instance fields; class id
     -> index + 1 (the first class of an id; none for id 0) */
  hp_Class *classes;
  uint64_t nclasses;
  sift_IdMap class_index;
  hp_Field *fields;
  uint64_t nfields;
  /* strings and stack frames: id -> record body offset */
  hp_Idx *strings;
  uint64_t nstrings;
  hp_Idx *frames;
  uint64_t nframes;
  hp_Idx *traces;           /* id = serial */
  uint64_t ntraces;
  hp_Idx *loads;            /* LOAD_CLASS by class id; off = record body */
  uint64_t nloads;
  hp_Root *roots;
  uint64_t nroots;
  uint64_t roots_by_kind[256];
  hp_Thread *threads;
  uint64_t nthreads;
  /* heap dumps in the file and the one indexed (0-based) */
  uint64_t ndumps, dump;
  /* what was odd but not fatal */
  uint64_t duplicates;      /* object ids seen twice (first kept) */
  uint64_t missing_classes; /* instances whose class dump is absent */
  uint64_t unknown_records; /* top-level records skipped by tag */
  uint64_t truncated_at;    /* offset where the file ends too early, or 0 */
  int nwarn;
  char warn[HP_MAXWARN][200];
  int threads_opt;          /* hp_Options.threads, which the reference
                               graph's build follows too (graph.h) */
} hp_Heap;

/* options of hp_build */
typedef struct hp_Options {
  int64_t dump;             /* 1-based dump to index; 0: the last */
  int threads;              /* 1: walk in this thread only; 2: two threads
                               when the dump has two records or more; 0:
                               two when it is big enough to gain */
} hp_Options;

/*
** Index the HPROF file p..n into h (zeroed by the caller). Returns SIFT_OK
** (possibly with warnings in h), or an error with a message in err; in
** every case hp_free(h) releases what was allocated.
*/
sift_Status hp_build (hp_Heap *h, const unsigned char *p, size_t n,
                      const hp_Options *opt, sift_Progress *pr,
                      sift_Error *err);

void hp_free (hp_Heap *h);

/* id and record offset of object number i */
static inline uint64_t hp_obj_id (const hp_Heap *h, uint64_t i) {
  return h->keys32 ? h->id_base + ((uint64_t)h->keys32[i] << h->id_shift)
                   : h->keys64[i];
}

static inline uint64_t hp_obj_off (const hp_Heap *h, uint64_t i) {
  return h->offs32 ? h->offs32[i] : h->offs64[i];
}

/* bytes of index per object (keys and offsets) */
static inline int hp_obj_bytes (const hp_Heap *h) {
  return (h->keys32 ? 4 : 8) + (h->offs32 ? 4 : 8);
}

/* lookups; -1 when absent */
int64_t hp_find (const hp_Heap *h, uint64_t id);
int64_t hp_find_class (const hp_Heap *h, uint64_t id);
const hp_Idx *hp_find_idx (const hp_Idx *v, uint64_t n, uint64_t id);

/* size in bytes of a value of basic type t, 0 for an invalid type */
int hp_type_size (const hp_Heap *h, int t);

/* a u4 at p (big-endian, as every HPROF number) */
static inline uint32_t hp_read_u4 (const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8
       | p[3];
}

/* an id of idsize (4 or 8) bytes at p; each width a constant, so that
   the compiler makes one load and a byte swap of it */
static inline uint64_t hp_read_id (const unsigned char *p, int idsize) {
  if (idsize == 4) return hp_read_u4(p);
  return (uint64_t)hp_read_u4(p) << 32 | hp_read_u4(p + 4);
}

/* a signed big-endian number of size 1, 2, 4 or 8 bytes at p (a byte,
   short, int or long field), sign-extended */
static inline int64_t hp_read_signed (const unsigned char *p, int size) {
  uint64_t u = 0;
  int i;
  for (i = 0; i < size; i++) u = u << 8 | p[i];
  switch (size) {
    case 1: return (int8_t)u;
    case 2: return (int16_t)u;
    case 4: return (int32_t)u;
    default: return (int64_t)u;
  }
}

/* read an id of h->idsize bytes at p */
uint64_t hp_id_at (const hp_Heap *h, const unsigned char *p);

/* the bytes of string record `id` (not NUL-terminated), or NULL */
const char *hp_string (const hp_Heap *h, uint64_t id, size_t *len);

/* Android heap of the object at offset off */
uint32_t hp_heap_at (const hp_Heap *h, uint64_t off);

/*
** What an object is, read from its record: kind (the tag), class index
** (-1 unknown; for arrays the array class when the dump has one), element
** type and length for arrays, where its data starts, and its shallow size
** (instance: the class's instance size; arrays: length x element size).
*/
typedef struct hp_ObjInfo {
  int kind;
  int64_t cls;
  uint64_t class_id;       /* instances and object arrays */
  int elem;                /* basic type of array elements */
  uint64_t length;         /* array elements; instance data bytes */
  const unsigned char *data;
  uint64_t shallow;
} hp_ObjInfo;

void hp_object (const hp_Heap *h, uint64_t num, hp_ObjInfo *o);

#endif
