// attention.c: the attention's scale and its batch check (attention.h).
#include "attention.h"

#include <math.h>

#include "error.h"

double attention_scale(int d) { return pow((double)d, 0.5); }

void attention_expect_batch(Tensor x, const char *module, const char *dims, int last) {
    if (x.ndim == 3 && (last == 0 || dim(x, 2) == last)) return;
    char s[96];
    size_format(shape(x), s, sizeof s);
    die(EXIT_BAD_INPUT, "%s: %s: expected a batch (%s), found shape %s", error_input(), module, dims, s);
}
