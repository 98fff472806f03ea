/*
** fuzz_bytecode.c
** libFuzzer harness for the lint's bytecode reader: the input read as a
** zip (each class entry parsed) or as one class file, and every constant
** pool reference of every instruction resolved the way lbytecode.c does.
*/

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/zip.h"
#include "lint/classfile.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void parse_class (const unsigned char *p, size_t n) {
  cf_Class c;
  cf_Str a, b, d;
  size_t k, j;
  char err[160];
  if (cf_parse(&c, p, n, err, sizeof err) != SIFT_OK) return;
  cf_class_name(&c, c.this_class, &a);
  cf_utf8(&c, c.source, &a);
  for (k = 0; k < c.nmethods; k++) {
    const cf_Method *m = &c.methods[k];
    cf_utf8(&c, m->name, &a);
    for (j = 0; j < m->ninsns; j++) {
      if (cf_opname(m->insns[j].op) == NULL) abort();  /* decode only keeps opcodes it knows */
      if (!cf_member(&c, m->insns[j].ref, &a, &b, &d)) cf_class_name(&c, m->insns[j].ref, &a);
    }
    for (j = 0; j < m->ntries; j++) cf_class_name(&c, m->tries[j].type, &a);
    for (j = 0; j < m->nlocals; j++) cf_utf8(&c, m->locals[j].name, &a);
  }
  cf_free(&c);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  sift_Zip z;
  sift_ZipEntry e;
  char err[160];
  if (sift_zip_open(&z, data, size, err, sizeof err) == SIFT_OK) {
    while (sift_zip_next(&z, &e)) {
      const unsigned char *body;
      unsigned char *owned;
      size_t n;
      if (sift_zip_read(&z, &e, 1 << 20, &body, &n, &owned) == SIFT_OK) parse_class(body, n);
      free(owned);
    }
  }
  parse_class(data, size);
  return 0;
}
