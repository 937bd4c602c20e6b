// dataset.h: chapter 2's data pipeline, as multihead-attention.ipynb In [2]
// builds it: GPTDatasetV1's sliding window over token ids, and torch 1.13's
// DataLoader over it (shuffle=True: a RandomSampler seeded from the default
// generator, then randperm on its own generator; batches stacked in order).
//
//   class GPTDatasetV1(Dataset):
//       def __init__(self, txt, tokenizer, max_length, stride):
//           token_ids = tokenizer.encode(txt, allowed_special={'<|endoftext|>'})
//           for i in range(0, len(token_ids) - max_length, stride):
//               input_chunk = token_ids[i:i + max_length]
//               target_chunk = token_ids[i + 1: i + max_length + 1]
//
// The windows are not copied: item i is token_ids[i * stride ..], read when
// a batch is stacked, so the dataset costs no memory beyond the ids.
//
// The DataLoader's draws (torch/utils/data/dataloader.py, sampler.py;
// lib/random/permutation.h): iter(loader) draws _base_seed (one int64
// random_(), two words of the default generator); the first next() runs the
// RandomSampler, which draws its seed (two more words), seeds a private
// generator with it and takes randperm(n) there. shuffle=False draws only
// _base_seed (a SequentialSampler).
#ifndef LITATTN_DATASET_H
#define LITATTN_DATASET_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"
#include "torch_generator.h"

typedef struct {
    const int64_t *token_ids;  // (n_ids,): the dataset's tokenization, owned by the caller
    long n_ids;
    int max_length, stride;
    long n;                    // len(dataset): windows i = 0, stride, ... < n_ids - max_length
} GPTDatasetV1;

// The dataset over token_ids (n_ids,). max_length >= 1 and stride >= 1 are
// the caller's to check; n is 0 when n_ids <= max_length.
GPTDatasetV1 gpt_dataset_v1(const int64_t *token_ids, long n_ids, int max_length, int stride);
// dataset[i] = (input_ids (max_length,), target_ids (max_length,)), into caller's arrays.
void gpt_dataset_v1_item(const GPTDatasetV1 *ds, long i, int64_t *input_ids, int64_t *target_ids);

typedef struct {
    const GPTDatasetV1 *dataset;
    int batch_size;
    bool shuffle, drop_last;
    int64_t base_seed;      // _base_seed, drawn by iter()
    int64_t sampler_seed;   // the RandomSampler's seed, drawn by the first next() (shuffle only)
    int64_t *order;         // (n,): the sampler's indices, made by the first next() (tensor pool)
    long pos;               // the next index of `order` to batch
    int started;            // iter() has run; 2 once the sampler has drawn
} DataLoader;

// DataLoader(dataset, batch_size, shuffle, drop_last): draws nothing yet.
DataLoader data_loader(const GPTDatasetV1 *dataset, int batch_size, bool shuffle, bool drop_last);
// iter(loader): draws _base_seed from g (the default generator).
void data_loader_iter(DataLoader *dl, TorchGenerator *g);
// next(it): the next batch x, y (b, max_length) (b = batch_size, or fewer for
// a short last batch without drop_last); false at the end of the epoch. The
// first call draws the sampler's seed from g and the permutation.
bool data_loader_next(DataLoader *dl, TorchGenerator *g, LongTensor *x, LongTensor *y);

#endif
