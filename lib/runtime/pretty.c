// pretty.c: IPython's pretty printer (IPython.lib.pretty, 8.x) for the one
// kind of value the chapters display with it: an OrderedDict of tensors.
//
// The printer is Oppen's: text and breakable separators go into a buffer;
// groups nest; when the buffered line would pass 79 columns the outermost
// group still open to breaking breaks (every separator of it becomes a
// newline at its indentation), and a value whose repr has several lines
// (a tensor's) forces a break of the outermost such group at each of its line
// ends. The groups are those IPython opens for OrderedDict(list of tuples):
// one around every value it prints, "OrderedDict(" (indent 12), "[" and
// "(" (indent 1 each), and one around each repr's lines. Breaking the
// outermost group picks the newest group of the shallowest depth that still
// has separators and removes the group at the same position counted from the
// front (IPython's GroupQueue.deq does so); that order is kept here.
#include "pretty.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "output.h"
#include "strbuf.h"
#include "tensor_repr.h"

enum { MAX_WIDTH = 79, MAX_GROUPS = 512, MAX_ITEMS = 1024, MAX_DEPTH = 32 };

typedef struct {
    int depth;
    int breakables;  // separators of this group still in the buffer
    bool want_break;
} Group;

typedef struct {
    bool is_text;
    const char *text;  // a text's characters (kept by the caller), or a separator
    int width;
    int indentation;   // a separator's
    Group *group;      // a separator's
} Item;

typedef struct {
    StrBuf out;
    int output_width, buffer_width, indentation;
    Item buffer[MAX_ITEMS];
    int head, tail;                 // buffer[head..tail)
    Group groups[MAX_GROUPS];
    int ngroups;
    Group *stack[MAX_DEPTH];
    int nstack;
    Group *queue[MAX_DEPTH][MAX_GROUPS / 4];  // by depth, in the order they opened
    int nqueue[MAX_DEPTH];
} Printer;

static void too_deep(void) { die_internal("state_dict display: more than the printer holds"); }

static void enqueue(Printer *p, Group *g) {
    if (g->depth >= MAX_DEPTH || p->nqueue[g->depth] == MAX_GROUPS / 4) too_deep();
    p->queue[g->depth][p->nqueue[g->depth]++] = g;
}

static void queue_remove(Printer *p, Group *g) {
    int n = p->nqueue[g->depth];
    for (int i = 0; i < n; i++)
        if (p->queue[g->depth][i] == g) {
            memmove(&p->queue[g->depth][i], &p->queue[g->depth][i + 1], (size_t)(n - i - 1) * sizeof(Group *));
            p->nqueue[g->depth]--;
            return;
        }
}

// GroupQueue.deq(): at the shallowest depth, the newest group with separators
// is marked to break and returned, and the entry at its position from the
// front is removed; a depth with none has all its groups marked and emptied.
static Group *dequeue(Printer *p) {
    for (int d = 0; d < MAX_DEPTH; d++) {
        int n = p->nqueue[d];
        for (int k = 0; k < n; k++) {
            Group *g = p->queue[d][n - 1 - k];
            if (g->breakables) {
                memmove(&p->queue[d][k], &p->queue[d][k + 1], (size_t)(n - k - 1) * sizeof(Group *));
                p->nqueue[d]--;
                g->want_break = true;
                return g;
            }
        }
        for (int i = 0; i < n; i++) p->queue[d][i]->want_break = true;
        p->nqueue[d] = 0;
    }
    return NULL;
}

static void newline(Printer *p, int indentation) {
    sb_putc(&p->out, '\n');
    sb_spaces(&p->out, indentation);
}

// An item leaves the buffer: its text, or its separator or a newline.
static int output_item(Printer *p, const Item *x, int width) {
    if (x->is_text) {
        sb_puts(&p->out, x->text);
        return width + x->width;
    }
    x->group->breakables--;
    if (x->group->want_break) {
        newline(p, x->indentation);
        return x->indentation;
    }
    if (!x->group->breakables) queue_remove(p, x->group);
    sb_puts(&p->out, x->text);
    return width + x->width;
}

static void break_one_group(Printer *p, Group *g) {
    while (g->breakables && p->head < p->tail) {
        const Item *x = &p->buffer[p->head++];
        p->output_width = output_item(p, x, p->output_width);
        p->buffer_width -= x->width;
    }
    while (p->head < p->tail && p->buffer[p->head].is_text) {
        const Item *x = &p->buffer[p->head++];
        p->output_width = output_item(p, x, p->output_width);
        p->buffer_width -= x->width;
    }
}

static void break_outer_groups(Printer *p) {
    while (MAX_WIDTH < p->output_width + p->buffer_width) {
        Group *g = dequeue(p);
        if (!g) return;
        break_one_group(p, g);
    }
}

static void flush(Printer *p) {
    // IPython adds each item's returned width to the width so far; every
    // flush here is followed by a newline, which sets it again.
    for (; p->head < p->tail; p->head++) p->output_width += output_item(p, &p->buffer[p->head], p->output_width);
    p->head = p->tail = 0;
    p->buffer_width = 0;
}

static Item *push_item(Printer *p) {
    if (p->head == p->tail) p->head = p->tail = 0;
    if (p->tail == MAX_ITEMS) too_deep();
    return &p->buffer[p->tail++];
}

static void text(Printer *p, const char *s) {
    int width = (int)strlen(s);
    if (p->head < p->tail) {
        *push_item(p) = (Item){.is_text = true, .text = s, .width = width};
        p->buffer_width += width;
        break_outer_groups(p);
    } else {
        sb_puts(&p->out, s);
        p->output_width += width;
    }
}

static void breakable(Printer *p) {
    Group *g = p->stack[p->nstack - 1];
    if (g->want_break) {
        flush(p);
        newline(p, p->indentation);
        p->output_width = p->indentation;
        p->buffer_width = 0;
    } else {
        g->breakables++;
        *push_item(p) = (Item){.text = " ", .width = 1, .indentation = p->indentation, .group = g};
        p->buffer_width += 1;
        break_outer_groups(p);
    }
}

static void hard_break(Printer *p) {
    Group *g = dequeue(p);
    if (g) break_one_group(p, g);
    flush(p);
    newline(p, p->indentation);
    p->output_width = p->indentation;
    p->buffer_width = 0;
}

static void begin_group(Printer *p, int indent, const char *open) {
    if (open) text(p, open);
    if (p->ngroups == MAX_GROUPS || p->nstack == MAX_DEPTH) too_deep();
    Group *g = &p->groups[p->ngroups++];
    *g = (Group){.depth = p->stack[p->nstack - 1]->depth + 1};
    p->stack[p->nstack++] = g;
    enqueue(p, g);
    p->indentation += indent;
}

static void end_group(Printer *p, int dedent, const char *close) {
    p->indentation -= dedent;
    Group *g = p->stack[--p->nstack];
    if (!g->breakables) queue_remove(p, g);
    if (close) text(p, close);
}

// A value printed by its repr(): one group around its lines, a forced break
// between them. Each line is a NUL-terminated piece of `lines` (cut in place).
static void repr_lines(Printer *p, char *lines) {
    begin_group(p, 0, NULL);  // RepresentationPrinter.pretty's own group
    begin_group(p, 0, NULL);  // _repr_pprint's
    for (char *line = lines; line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (line != lines) hard_break(p);
        text(p, line);
        line = nl ? nl + 1 : NULL;
    }
    end_group(p, 0, NULL);
    end_group(p, 0, NULL);
}

char *state_dict_pretty(const StateDict *sd) {
    Printer *p = xcalloc(1, sizeof *p, "the state_dict's printer");
    p->groups[0] = (Group){0};
    p->stack[p->nstack++] = &p->groups[p->ngroups++];
    enqueue(p, &p->groups[0]);
    char *keys[STATE_DICT_MAX], *values[STATE_DICT_MAX];
    begin_group(p, 0, NULL);                  // pretty(OrderedDict)
    begin_group(p, 0, NULL);                  // pretty(CallExpression)
    begin_group(p, 12, "OrderedDict(");       // its name and arguments
    if (sd->n) {
        begin_group(p, 0, NULL);              // pretty(list)
        begin_group(p, 1, "[");
        for (int i = 0; i < sd->n; i++) {
            if (i) {
                text(p, ",");
                breakable(p);
            }
            begin_group(p, 0, NULL);          // pretty(tuple)
            begin_group(p, 1, "(");
            StrBuf k = {0};
            sb_printf(&k, "'%s'", sd->entry[i].key);  // repr() of a key without quotes or backslashes
            keys[i] = sb_take(&k);
            repr_lines(p, keys[i]);
            text(p, ",");
            breakable(p);
            values[i] = tensor_repr(sd->entry[i].value);
            repr_lines(p, values[i]);
            end_group(p, 1, ")");
            end_group(p, 0, NULL);
        }
        end_group(p, 1, "]");
        end_group(p, 0, NULL);
    }
    end_group(p, 12, ")");
    end_group(p, 0, NULL);
    end_group(p, 0, NULL);
    flush(p);
    sb_putc(&p->out, '\n');
    char *s = sb_take(&p->out);
    for (int i = 0; i < sd->n; i++) free(keys[i]), free(values[i]);
    free(p);
    return s;
}

void display_state_dict(const Run *run, const StateDict *sd) {
    if (output_is_quiet(run)) return;
    char *s = state_dict_pretty(sd);
    output_write(s, strlen(s));
    free(s);
}
