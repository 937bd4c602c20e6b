// settings.c: see settings.h.
#include "settings.h"

#include <string.h>

// Sizes are checked per tensor in elements (TENSOR_MAX_NUMEL, tensor.h); a
// setting only has to be a sensible count. 2^24 keeps every product of two
// of them inside a long.
#define MAX_COUNT (1LL << 24)

const SettingRule setting_rules[] = {
    {"chapter", SETTING_TEXT, 0, 0, "the chapter the fixture is for"},
    {"seed", SETTING_SEED, 0, 0, "torch.manual_seed's argument, a Python int in decimal"},
    {"skip", SETTING_INT, 0, 1000000000LL, "draws discarded after seeding"},
    {"d_in", SETTING_INT, 1, MAX_COUNT, "input features per token"},
    {"d_out", SETTING_INT, 1, MAX_COUNT, "output features"},
    {"tokens", SETTING_INT, 1, MAX_COUNT, "tokens per input"},
    {"batch_size", SETTING_INT, 1, MAX_COUNT, "inputs per batch"},
    {"context_length", SETTING_INT, 1, MAX_COUNT, "the longest input the causal mask covers"},
    {"num_heads", SETTING_INT, 1, MAX_COUNT, "attention heads"},
    {"context_len", SETTING_INT, 1, MAX_COUNT, "tokens per input (mha-implementations.ipynb)"},
    {"embed_dim", SETTING_INT, 1, MAX_COUNT, "features per token (mha-implementations.ipynb)"},
    {"qkv_bias", SETTING_BOOL, 0, 1, "the query, key and value layers have a bias"},
    {"training", SETTING_BOOL, 0, 1, "the module is in training mode (dropout draws)"},
    {"dropout", SETTING_FLOAT, 0, 1, "nn.Dropout's probability p"},
    {"softmax_dim", SETTING_INT, -3, 2, "the dimension the attention softmax normalises"},
    {"output_dim", SETTING_INT, 1, MAX_COUNT, "the embedding tables' width (multihead-attention.ipynb)"},
    {"max_length", SETTING_INT, 1, 1024, "tokens per window of GPTDatasetV1, at most the 1024 positions embedded"},
    {"stride", SETTING_INT, 1, MAX_COUNT, "GPTDatasetV1's step between windows"},
    {"text", SETTING_TEXT, 0, 0, "a configuration's own text (UTF-8, at most 64 KiB) instead of the book's file"},
};
const int n_setting_rules = (int)(sizeof setting_rules / sizeof setting_rules[0]);

const SettingRule *setting_rule(const char *name) {
    const char *dot = strrchr(name, '.');
    const char *base = dot ? dot + 1 : name;
    for (int i = 0; i < n_setting_rules; i++)
        if (!strcmp(setting_rules[i].name, base)) return &setting_rules[i];
    return NULL;
}
