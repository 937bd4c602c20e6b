// dataset.c: see dataset.h.
#include "dataset.h"

#include "error.h"
#include "permutation.h"

GPTDatasetV1 gpt_dataset_v1(const int64_t *token_ids, long n_ids, int max_length, int stride) {
    GPTDatasetV1 ds = {token_ids, n_ids, max_length, stride, 0};
    // len(range(0, n_ids - max_length, stride))
    long span = n_ids - max_length;
    ds.n = span > 0 ? (span + stride - 1) / stride : 0;
    return ds;
}

// input_ids (max_length,), target_ids (max_length,)
void gpt_dataset_v1_item(const GPTDatasetV1 *ds, long i, int64_t *input_ids, int64_t *target_ids) {
    const int64_t *w = ds->token_ids + i * (long)ds->stride;
    for (int t = 0; t < ds->max_length; t++) input_ids[t] = w[t], target_ids[t] = w[t + 1];
}

DataLoader data_loader(const GPTDatasetV1 *dataset, int batch_size, bool shuffle, bool drop_last) {
    return (DataLoader){.dataset = dataset, .batch_size = batch_size, .shuffle = shuffle, .drop_last = drop_last};
}

void data_loader_iter(DataLoader *dl, TorchGenerator *g) {
    // _BaseDataLoaderIter.__init__: self._base_seed = loader._get_shared_seed()
    // i.e. torch.empty((), dtype=torch.int64).random_(generator=loader.generator).item()
    dl->base_seed = torch_random_int64(g);
    dl->started = 1;
    dl->pos = 0;
}

// The sampler's indices, made when the first batch is asked for (in the
// tensor pool: freed with every tensor).
static void start_sampler(DataLoader *dl, TorchGenerator *g) {
    long n = dl->dataset->n;
    if (n > TENSOR_MAX_NUMEL) die(EXIT_BAD_INPUT, "a DataLoader over %ld items (at most 2^26)", n);
    dl->order = long_tensor_empty(SIZE((int)n)).data;
    if (dl->shuffle) {
        // RandomSampler.__iter__: seed = int(torch.empty((), dtype=torch.int64).random_().item());
        // generator = torch.Generator(); generator.manual_seed(seed); randperm(n, generator=generator)
        dl->sampler_seed = torch_random_int64(g);
        TorchGenerator own;
        torch_manual_seed(&own, (uint64_t)dl->sampler_seed);
        torch_randperm(dl->order, n, &own);
    } else {
        for (long i = 0; i < n; i++) dl->order[i] = i;  // SequentialSampler
    }
    dl->started = 2;
}

bool data_loader_next(DataLoader *dl, TorchGenerator *g, LongTensor *x, LongTensor *y) {
    if (!dl->started) die_internal("next() on a DataLoader before iter()");
    if (dl->started == 1) start_sampler(dl, g);
    long n = dl->dataset->n, left = n - dl->pos;
    if (left <= 0 || (dl->drop_last && left < dl->batch_size)) return false;
    int b = left < dl->batch_size ? (int)left : dl->batch_size;
    int T = dl->dataset->max_length;
    // default_collate: torch.stack of the items, in the sampler's order
    *x = long_tensor_empty(SIZE(b, T));
    *y = long_tensor_empty(SIZE(b, T));
    for (int i = 0; i < b; i++)
        gpt_dataset_v1_item(dl->dataset, dl->order[dl->pos + i], x->data + (long)i * T, y->data + (long)i * T);
    dl->pos += b;
    return true;
}
