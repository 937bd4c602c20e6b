// inputs.c: an input's cases: datasets.c's kinds, then 2^40 declared
// values in unstored chunks, too many tokens to attend over (within the
// reader's element limit; with --seed too for a chapter that draws), and
// one token (refused or accepted, either is an answer).
#include <stdlib.h>

#include "malformed.h"

void input_cases(const Chapter *ch, int i) {
    const char *input = ch->inputs[i];
    dataset_cases(ch, "input", input, "input");
    char path[4096], kase[160];
    hid_t f;

    // Declares 2^40 values (4 TiB of float32; 2^20 x 2^20 for a matrix) in
    // chunks of which none is stored: the file stays a few KiB.
    snprintf(kase, sizeof kase, "input_huge:%s", input);
    f = begin(ch, kase, path, sizeof path);
    Array a = read_array(f, input);
    hsize_t big[MAX_RANK], chunk[MAX_RANK];
    for (int d = 0; d < a.rank; d++) big[d] = a.rank == 1 ? 1ull << 40 : 1ull << 20, chunk[d] = 1;
    chunk[a.rank - 1] = 1024;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    MUST(H5Pset_chunk(dcpl, a.rank, chunk));
    put_dataset(f, input, "input", H5T_IEEE_F32LE, a.rank, big, H5T_NATIVE_FLOAT, NULL, dcpl);
    H5Pclose(dcpl);
    free(a.data);
    end(f, kase, ch, path, input, "prefix");
    if (ch->input_rank[i] != 2) return;  // the token cases are for (T, d_in) inputs

    // Too many tokens to attend over, though within the reader's element
    // limit (2^20): 8193 tokens of the fixture's own d_in (or 2^20 / d_in,
    // if fewer), so that the weights still fit and the T x T scores (over
    // 2^26 elements) or the causal mask's context length are what is refused. Chunked, nothing stored (a fill value of 0.5). With --seed nothing is read
    // for the weights either. (A wide input within the element limit is
    // not bad input: the limits count elements, not the size of one axis.)
    for (int k = 0; k < (ch->draws ? 2 : 1); k++) {
        static const char *const kinds[] = {"too_many_tokens", "too_many_tokens_seeded"};
        snprintf(kase, sizeof kase, "%s:%s", kinds[k], input);
        f = begin(ch, kase, path, sizeof path);
        a = read_array(f, input);
        hsize_t tokens = (1ull << 20) / a.dims[1] < 8193 ? (1ull << 20) / a.dims[1] : 8193;  // 8193^2 > 2^26
        hsize_t dims[2] = {tokens, a.dims[1]}, chunk2[2] = {1024, a.dims[1]};
        free(a.data);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        MUST(H5Pset_chunk(dcpl, 2, chunk2));
        const float half = 0.5f;  // unstored chunks read as 0.5, not 0 (0/0 would print nan)
        MUST(H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &half));
        put_dataset(f, input, "input", H5T_IEEE_F32LE, 2, dims, H5T_NATIVE_FLOAT, NULL, dcpl);
        H5Pclose(dcpl);
        MUST(H5Fclose(f));
        record(kase, ch, path, k ? "--seed 1" : "", input, "finite");  // other inputs print other values
    }

    // One token. Some chapters need two (their query is inputs[1]), others
    // attend over one: refused or accepted, either is an answer.
    snprintf(kase, sizeof kase, "one_token:%s", input);
    f = begin(ch, kase, path, sizeof path);
    a = read_array(f, input);
    hsize_t one[2] = {1, a.dims[1]};
    put_floats(f, input, "input", 2, one, a.data);
    free(a.data);
    end(f, kase, ch, path, input, "either");
}
