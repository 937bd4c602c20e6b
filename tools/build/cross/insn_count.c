// insn_count.c: a TCG plugin for qemu-user 7.2 (plugin API version 1) that
// counts the guest instructions a program runs between calls of a marker
// function, for tools/build/cross/count.sh. Built for the machine that runs
// qemu, not for the guest:
//
//   cc -shared -fPIC -O2 -o insn_count.so tools/build/cross/insn_count.c
//   qemu-aarch64 -d plugin -D LOG -plugin ./insn_count.so,mark=NAME PROGRAM
//
// Every translated block adds its instruction count to a running total
// when it runs (an inline add, no call), and to the total of the guest
// symbol (function) its first instruction is in. Each time the block at the
// start of the function NAME runs, the totals are taken; at exit the plugin
// writes, per window between two such calls (window i: from call i to call
// i + 1), one line
//   window i total N
// and one line per symbol with instructions in the window, most first:
//   window i symbol NAME N
// through qemu's log (-d plugin; -D LOG names its file). `-d plugin` also
// makes qemu-user 7.2 read the guest's symbol table, without which no
// symbol is known. One guest thread: the counters are not atomic, and a
// second thread would add to them unordered.
//
// Debian's qemu-user ships no qemu-plugin.h: the few declarations used are
// written below after the API's documentation (docs/devel/tcg-plugins.rst and
// the header's comments, QEMU 7.2): opaque handles, a uint64_t plugin id, and
// the enumerators' values, the first of each enum (0).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// --- the plugin API of QEMU 7.2, as documented ----------------------------
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t;  // not read here
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const char *qemu_plugin_insn_symbol(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);
#define PLUGIN_EXPORT __attribute__((visibility("default")))
PLUGIN_EXPORT int qemu_plugin_version = 1;
PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);
// ---------------------------------------------------------------------------

enum { MAX_SYMBOLS = 4096, MAX_MARKS = 256 };

static uint64_t total;                  // instructions run so far
static uint64_t per_symbol[MAX_SYMBOLS];  // ... by symbol; [0]: no symbol known
static const char *symbol_name[MAX_SYMBOLS] = {"(no symbol)"};
static int symbols = 1;
static uint64_t *marks[MAX_MARKS];  // at each marker call: total, then per_symbol
static int n_marks, marks_lost;
static char *mark_name;

// The index of a symbol's counter (names are qemu's, alive to the end).
static int symbol_index(const char *name) {
    if (!name) return 0;
    for (int i = 1; i < symbols; i++)
        if (symbol_name[i] == name || strcmp(symbol_name[i], name) == 0) return i;
    if (symbols == MAX_SYMBOLS) return 0;
    symbol_name[symbols] = name;
    return symbols++;
}

static void on_mark(unsigned int vcpu, void *userdata) {
    (void)vcpu, (void)userdata;
    uint64_t *m = n_marks < MAX_MARKS ? malloc((MAX_SYMBOLS + 1) * sizeof *m) : NULL;
    if (!m) {
        marks_lost++;
        return;
    }
    m[0] = total;
    memcpy(m + 1, per_symbol, sizeof per_symbol);
    marks[n_marks++] = m;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    const size_t n = qemu_plugin_tb_n_insns(tb);
    const char *name = n ? qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0)) : NULL;
    const int s = symbol_index(name);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &total, n);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &per_symbol[s], n);
    // the block that starts the marker (its first block: qemu_plugin_insn_symbol
    // names a function for every address in it, so the block must start it)
    static uint64_t mark_vaddr;
    if (name && strcmp(name, mark_name) == 0 && (mark_vaddr == 0 || mark_vaddr == qemu_plugin_tb_vaddr(tb))) {
        mark_vaddr = qemu_plugin_tb_vaddr(tb);
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
    }
}

typedef struct {
    int symbol;
    uint64_t count;
} Share;

static int by_count(const void *a, const void *b) {
    const uint64_t x = ((const Share *)a)->count, y = ((const Share *)b)->count;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void report(qemu_plugin_id_t id, void *userdata) {
    (void)id, (void)userdata;
    static Share share[MAX_SYMBOLS];
    char line[512];
    snprintf(line, sizeof line, "marks %d lost %d symbols %d\n", n_marks, marks_lost, symbols);
    qemu_plugin_outs(line);
    for (int w = 0; w + 1 < n_marks; w++) {
        snprintf(line, sizeof line, "window %d total %llu\n", w, (unsigned long long)(marks[w + 1][0] - marks[w][0]));
        qemu_plugin_outs(line);
        int k = 0;
        for (int s = 0; s < symbols; s++) {
            const uint64_t c = marks[w + 1][s + 1] - marks[w][s + 1];
            if (c) share[k++] = (Share){s, c};
        }
        qsort(share, (size_t)k, sizeof *share, by_count);
        for (int i = 0; i < k; i++) {
            snprintf(line, sizeof line, "window %d symbol %s %llu\n", w, symbol_name[share[i].symbol],
                     (unsigned long long)share[i].count);
            qemu_plugin_outs(line);
        }
    }
}

PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    (void)info;
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "mark=", 5) == 0) mark_name = argv[i] + 5;
    if (!mark_name || !*mark_name) {
        fprintf(stderr, "insn_count: expected the argument mark=FUNCTION, found none\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, report, NULL);
    return 0;
}
