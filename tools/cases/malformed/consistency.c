// consistency.c: shapes that disagree with each other: inputs with one
// more feature than the weights take; a d_out twice what the weights hold.
// One of the weights is where it shows.
#include <stdlib.h>
#include <string.h>

#include "malformed.h"

// Shapes that disagree with each other: one of the weights is where it
// shows (which one depends on the order the chapter reads them in).
void consistency_cases(const Chapter *ch) {
    char path[4096], any_weight[2048] = "";
    for (int w = 0; w < ch->n_weights; w++)
        snprintf(any_weight + strlen(any_weight), sizeof any_weight - strlen(any_weight), "%s%s", w ? "|" : "",
                 ch->weights[w]);
    int in = -1;
    for (int i = 0; i < ch->n_inputs; i++)
        if (!strcmp(ch->inputs[i], "inputs") && ch->input_rank[i] == 2) in = i;
    if (in < 0) return;

    // inputs with one more feature than the weights take.
    hid_t f = begin(ch, "inputs_d_in_mismatch", path, sizeof path);
    Array a = read_array(f, "inputs");
    hsize_t wider[2] = {a.dims[0], a.dims[1] + 1};
    float *v = malloc(wider[0] * wider[1] * sizeof *v);
    for (hsize_t r = 0; r < wider[0]; r++)
        for (hsize_t c = 0; c < wider[1]; c++) v[r * wider[1] + c] = c < a.dims[1] ? a.data[r * a.dims[1] + c] : 0.5f;
    put_floats(f, "inputs", "input", 2, wider, v);
    free(v);
    free(a.data);
    end(f, "inputs_d_in_mismatch", ch, path, any_weight, "finite");

    if (!has_attr(ch, "d_out")) return;
    // d_out one more than the weights hold.
    f = begin(ch, "d_out_mismatch", path, sizeof path);
    // Twice the fixture's d_out: still a multiple of any head count.
    long long d_out = 2 * root_int(f, "d_out");
    put_int_attr(f, "d_out", (long long)d_out);
    end(f, "d_out_mismatch", ch, path, any_weight, "prefix");
}
