/*
** dict.h
** The dictionary that gives hashed BMD strings back their text (dict.c).
*/

#if !defined(sift_dict_h)
#define sift_dict_h

#include "bmd.h"

bmd_Dict *bmd_dict_new (void);
void bmd_dict_free (bmd_Dict *d);

/* distinct spellings held (duplicates included) */
size_t bmd_dict_size (const bmd_Dict *d);

/* one string (and its other spellings, for a class name); 0 without memory */
int bmd_dict_add_string (bmd_Dict *d, const unsigned char *s, size_t n);

/* the strings of a jar or apk (zip), dex or class file; *added counts
   the strings found */
sift_Status bmd_dict_add_file (bmd_Dict *d, const unsigned char *p, size_t n,
                               uint64_t *added, sift_Error *err);

/* ready for bmd_dict_find after strings were added one by one */
void bmd_dict_sort (bmd_Dict *d);

#endif
