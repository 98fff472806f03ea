/*
** fuzz_bytecode.c
** libFuzzer harness for the lint's bytecode readers: the input read as a
** zip (each class and dex entry parsed), as one class file and as one dex
** file, and every reference of every instruction resolved the way
** lbytecode.c does; every annotation's type and value strings too, and a
** class's enclosing method.
*/

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/zip.h"
#include "lint/classfile.h"
#include "lint/dex.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* a class file's annotations[first .. first + count), resolved as lbytecode.c does */
static void class_annotations (const cf_Class *c, size_t first, size_t count) {
  size_t k, j;
  cf_Str s;
  if (first + count > c->nannotations) abort();
  for (k = first; k < first + count; k++) {
    const cf_Annotation *a = &c->annotations[k];
    if (a->first + a->count > c->nstrings) abort();
    cf_utf8(c, a->type, &s);
    for (j = 0; j < a->count; j++) cf_utf8(c, c->strings[a->first + j], &s);
  }
}

static void dex_annotations (const dx_File *d, size_t first, size_t count) {
  const unsigned char *s;
  size_t k, j, len;
  if (first + count > d->nannotations) abort();
  for (k = first; k < first + count; k++) {
    const dx_Annotation *a = &d->annotations[k];
    if (a->first + a->count > d->nvalues) abort();
    dx_type(d, a->type, &s, &len);
    for (j = 0; j < a->count; j++) dx_string(d, d->values[a->first + j], &s, &len);
  }
}

static void parse_class (const unsigned char *p, size_t n) {
  cf_Class c;
  cf_Str a, b, d;
  size_t k, j;
  sift_Error err;
  if (cf_parse(&c, p, n, &err) != SIFT_OK) return;
  cf_class_name(&c, c.this_class, &a);
  cf_utf8(&c, c.source, &a);
  class_annotations(&c, c.anno_first, c.nannos);
  if (cf_class_name(&c, c.enclosing_class, &a)) cf_name_and_type(&c, c.enclosing_method, &b, &d);
  for (k = 0; k < c.nmethods; k++) {
    const cf_Method *m = &c.methods[k];
    cf_utf8(&c, m->name, &a);
    class_annotations(&c, m->anno_first, m->nannos);
    for (j = 0; j < m->ninsns; j++) {
      if (cf_opname(m->insns[j].op) == NULL) abort();  /* decode only keeps opcodes it knows */
      if (!cf_member(&c, m->insns[j].ref, &a, &b, &d)) cf_class_name(&c, m->insns[j].ref, &a);
    }
    for (j = 0; j < m->ntries; j++) cf_class_name(&c, m->tries[j].type, &a);
    for (j = 0; j < m->nlocals; j++) cf_utf8(&c, m->locals[j].name, &a);
  }
  cf_free(&c);
}

static void parse_dex (const unsigned char *p, size_t n) {
  dx_File d;
  const unsigned char *s, *params;
  size_t len, k, j, i;
  uint32_t a, b, c, np;
  sift_Error err;
  if (dx_parse(&d, p, n, &err) != SIFT_OK) return;
  for (k = 0; k < d.nclasses; k++) {
    const dx_Class *cl = &d.classes[k];
    dx_type(&d, cl->class_idx, &s, &len);
    dx_string(&d, cl->source_idx, &s, &len);
    dex_annotations(&d, cl->anno_first, cl->nannos);
    if (cl->enclosing_method != 0xFFFFFFFFu && dx_method(&d, cl->enclosing_method, &a, &b, &c)) dx_type(&d, a, &s, &len);
    for (j = 0; j < cl->nmethods; j++) {
      const dx_Method *m = &cl->methods[j];
      dex_annotations(&d, m->anno_first, m->nannos);
      if (dx_method(&d, m->method_idx, &a, &b, &c) && dx_proto(&d, c, &a, &np, &params))
        for (i = 0; i < np; i++) dx_type(&d, params[2 * i] | (uint32_t)params[2 * i + 1] << 8, &s, &len);
      for (i = 0; i < m->ninsns; i++) {
        const dx_Insn *in = &m->insns[i];
        int kind = dx_refkind(in->op);
        if (dx_opname(in->op) == NULL) abort();  /* decode only keeps opcodes it knows */
        if (in->ref < 0 || in->ref > 0xFFFFFFFF) continue;
        if (kind == 'm' && dx_method(&d, (uint32_t)in->ref, &a, &b, &c)) dx_type(&d, a, &s, &len);
        else if (kind == 'f' && dx_field(&d, (uint32_t)in->ref, &a, &b)) dx_string(&d, b, &s, &len);
        else if (kind == 't') dx_type(&d, (uint32_t)in->ref, &s, &len);
        else if (kind == 's') dx_string(&d, (uint32_t)in->ref, &s, &len);
      }
      for (i = 0; i < m->ntries; i++) if (m->tries[i].type >= 0) dx_type(&d, (uint32_t)m->tries[i].type, &s, &len);
    }
  }
  dx_free(&d);
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
      if (sift_zip_read(&z, &e, 1 << 20, &body, &n, &owned) == SIFT_OK) {
        parse_class(body, n);
        parse_dex(body, n);
      }
      free(owned);
    }
  }
  parse_class(data, size);
  parse_dex(data, size);
  return 0;
}
