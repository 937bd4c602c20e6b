// hdf5_snapshot_records.c: the decoder of hdf5_snapshot_records.h's records
// into a Snapshot (hdf5_snapshot.h), for the parent (a reader child's
// records) and for the shipped snapshots (the records the build compiled
// in), and snapshot_free. A record that ends short, a tag out of place or a
// dataset of more values than allowed makes the stream incomplete: the
// decode then fails, and the caller frees what it holds.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hdf5_snapshot.h"
#include "hdf5_snapshot_records.h"

static void get(Stream *s, void *p, size_t n) {
    if (s->bad || n > s->len - s->pos) {
        s->bad = 1;
        memset(p, 0, n);
        return;
    }
    memcpy(p, s->data + s->pos, n);
    s->pos += n;
}
static long long get_i64(Stream *s) {
    long long v;
    get(s, &v, sizeof v);
    return v;
}
static char *get_str(Stream *s) {
    long long n = get_i64(s);
    if (n < 0 || (size_t)n > s->len - s->pos) {
        s->bad = 1;
        n = 0;
    }
    char *text = xmalloc((size_t)n + 1, "a name or value read from the fixture");
    get(s, text, (size_t)n);
    text[n] = '\0';
    return text;
}
static void get_fixed(Stream *s, char *buf, size_t len) {
    char *text = get_str(s);
    snprintf(buf, len, "%s", text ? text : "");
    free(text);
}

static void *append(void *array, int *n, size_t size) {
    char *grown = xrealloc(array, (size_t)(*n + 1) * size, "the fixture's list of objects");
    memset(grown + (size_t)*n * size, 0, size);
    (*n)++;
    return grown;
}

static int decode_attr(Stream *s, SnapGroup *g) {
    SnapAttr *attrs = append(g->attrs, &g->n_attrs, sizeof *attrs);
    if (!attrs) return 0;
    g->attrs = attrs;
    SnapAttr *a = &attrs[g->n_attrs - 1];
    a->name = get_str(s);
    a->kind = (AttrKind)get_i64(s);
    get_fixed(s, a->type, sizeof a->type);
    a->space = (SpaceKind)get_i64(s);
    a->count = get_i64(s);
    a->read_ok = (int)get_i64(s);
    a->is_unsigned = (int)get_i64(s);
    a->length = get_i64(s);
    a->text = get_str(s);
    a->value = get_i64(s);
    get(s, &a->uvalue, sizeof a->uvalue);
    get(s, &a->dvalue, sizeof a->dvalue);
    return 1;
}

static int decode_object(Stream *s, SnapGroup *g, long long max_elements) {
    SnapObject *objects = append(g->objects, &g->n_objects, sizeof *objects);
    if (!objects) return 0;
    g->objects = objects;
    SnapObject *o = &objects[g->n_objects - 1];
    o->name = get_str(s);
    get_fixed(s, o->found, sizeof o->found);
    o->is_dataset = (int)get_i64(s);
    o->is_group = (int)get_i64(s);
    if (!o->is_dataset) return 1;
    get_fixed(s, o->type, sizeof o->type);
    o->is_float32 = (int)get_i64(s);
    o->is_int64 = (int)get_i64(s);
    o->space = (SpaceKind)get_i64(s);
    o->rank = (int)get_i64(s);
    if (o->rank > SNAPSHOT_MAX_RANK) s->bad = 1, o->rank = -1;
    for (int i = 0; i < o->rank; i++) o->dims[i] = get_i64(s);
    get_fixed(s, o->role, sizeof o->role);
    o->values_read = (int)get_i64(s);
    get_fixed(s, o->refused, sizeof o->refused);
    o->numel = get_i64(s);
    if (o->values_read == 1) {
        const size_t width = o->is_int64 ? sizeof(int64_t) : sizeof(float);
        void *v = NULL;
        if (o->numel <= 0 || o->numel > max_elements) {
            s->bad = 1;
            o->values_read = 0;
            return 0;
        }
        v = xmalloc((size_t)o->numel * width, "a dataset's values");
        get(s, v, (size_t)o->numel * width);
        if (o->is_int64) o->ivalues = v;
        else o->values = v;
    }
    return 1;
}

int hdf5_snapshot_decode(Stream *s, Snapshot *out, long long max_elements) {
    SnapGroup *g = NULL;
    while (!s->bad && s->pos < s->len) {
        char tag;
        get(s, &tag, 1);
        if (tag == 'G') {
            SnapGroup *groups = append(out->groups, &out->n_groups, sizeof *groups);
            if (!groups) return 0;
            out->groups = groups;
            g = &groups[out->n_groups - 1];
            g->name = get_str(s);
            g->status = (SnapStatus)get_i64(s);
            get_fixed(s, g->found, sizeof g->found);
        } else if (tag == 'A' && g) {
            if (!decode_attr(s, g)) return 0;
        } else if (tag == 'O' && g) {
            if (!decode_object(s, g, max_elements)) return 0;
        } else if (tag == 'L' && g) {
            g->listing_failed = 1;
        } else if (tag == 'Z') {
            out->status = (SnapStatus)get_i64(s);
            get_fixed(s, out->note, sizeof out->note);
            return !s->bad && (out->status != SNAP_OK || out->n_groups > 0);
        } else {
            s->bad = 1;
        }
    }
    return 0;
}

static void free_group(SnapGroup *g) {
    for (int i = 0; i < g->n_attrs; i++) free(g->attrs[i].name), free(g->attrs[i].text);
    for (int i = 0; i < g->n_objects; i++) free(g->objects[i].name), free(g->objects[i].values), free(g->objects[i].ivalues);
    free(g->attrs);
    free(g->objects);
    free(g->name);
}

void snapshot_free(Snapshot *s) {
    for (int i = 0; i < s->n_groups; i++) free_group(&s->groups[i]);
    free(s->groups);
    memset(s, 0, sizeof *s);
}
