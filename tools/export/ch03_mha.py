"""ch03_mha.py: multihead-attention.ipynb, "Multi-head Attention Plus Data
Loading" (In [2]-[8]): the text, GPT-2's tokenizer, GPTDatasetV1, the
shuffling DataLoader, two nn.Embedding tables, and both multi-head classes.

The notebook's classes and create_dataloader are copied unchanged (comments
shortened). Its tokenizer is tiktoken's gpt2; here the ids come from npm's
js-tiktoken run by node (tools/export/encode_ids.mjs), a tokenizer that is not
litattn's, behind the same encode() call. Without node or js-tiktoken
(npm ci --prefix tools) this chapter's files cannot be exported:
JsTiktokenMissing says why.

The notebook draws its embedding tables and its shuffle from the default
generator before any torch.manual_seed: from torch.initial_seed(), which a
torch 1.13 process picks at random. BOOK_INITIAL_SEED is one such seed, as
a torch 1.13 process reported it (`python3 -c "import torch;
print(torch.initial_seed())"`); a generator created with seed s is the one
torch.manual_seed(s) makes, so the export seeds it so, and records it as
the fixture's `seed`.
"""

import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

from . import REPO_ROOT, TOOLS_DIR

BOOK_INITIAL_SEED = 8284876193480010798
BOOK_TEXT = os.path.join(REPO_ROOT, "fixtures", "gpt2", "small-text-sample.txt")
NODE_DIR = TOOLS_DIR  # package.json, package-lock.json and node_modules/: js-tiktoken, pinned
ENCODE_IDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "encode_ids.mjs")


class JsTiktokenMissing(RuntimeError):
    pass


def js_tiktoken_status():
    """None if node and the pinned js-tiktoken are there, else why not."""
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        return "no node to run the reference tokenizer (apt-get install nodejs npm; npm ci --prefix tools)"
    pkg = os.path.join(NODE_DIR, "node_modules", "js-tiktoken", "package.json")
    if not os.path.exists(pkg):
        return "js-tiktoken is not installed (npm ci --prefix tools)"
    want = json.load(open(os.path.join(NODE_DIR, "package.json")))["devDependencies"]["js-tiktoken"]
    have = json.load(open(pkg))["version"]
    if want != have:
        return f"tools/node_modules has js-tiktoken {have}, package.json pins {want} (npm ci --prefix tools)"
    return None


_encoded = {}


def node_inputs():
    """The files this chapter's export reads besides Python's: for the depfile.
    Without js-tiktoken, tools/ itself: `npm ci` making node_modules there
    changes it, so that the next build exports this chapter's files again."""
    node = shutil.which("node") or shutil.which("nodejs")
    pkg = os.path.join(NODE_DIR, "node_modules", "js-tiktoken", "package.json")
    return [BOOK_TEXT, ENCODE_IDS, os.path.join(NODE_DIR, "package.json"),
            os.path.join(NODE_DIR, "package-lock.json"), pkg if os.path.exists(pkg) else NODE_DIR] + \
        ([os.path.realpath(node)] if node else [])


def js_tiktoken_encode(text):
    """(ids of encode(text, allowed_special={'<|endoftext|>'}), whether encode(text) raises)."""
    if text not in _encoded:
        _encoded[text] = _run_node(text)
    return _encoded[text]


def _run_node(text):
    why = js_tiktoken_status()
    if why:
        raise JsTiktokenMissing(why)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "text.txt")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        out = subprocess.run([shutil.which("node") or shutil.which("nodejs"),
                              ENCODE_IDS, path],
                             check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return r["allowed"], r["raises"]


class JsTiktokenGPT2:
    """tiktoken.get_encoding("gpt2")'s encode(), answered by js-tiktoken;
    remembers the ids of the last encode() that allowed <|endoftext|> (the
    dataset's `token_ids`, a local of its __init__)."""

    def __init__(self):
        self.token_ids = None

    def encode(self, text, allowed_special=frozenset()):
        ids, raises = js_tiktoken_encode(text)
        if "<|endoftext|>" in allowed_special:
            self.token_ids = ids
            return list(ids)
        if raises:
            raise ValueError("Encountered text corresponding to disallowed special token '<|endoftext|>'.")
        return list(ids)


# --- multihead-attention.ipynb In [2], unchanged but for the tokenizer --------------

class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        self.input_ids = []
        self.target_ids = []

        # Tokenize the entire text
        token_ids = tokenizer.encode(txt, allowed_special={'<|endoftext|>'})

        # Use a sliding window to chunk the book into overlapping sequences of max_length
        for i in range(0, len(token_ids) - max_length, stride):
            input_chunk = token_ids[i:i + max_length]
            target_chunk = token_ids[i + 1: i + max_length + 1]
            self.input_ids.append(torch.tensor(input_chunk))
            self.target_ids.append(torch.tensor(target_chunk))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]


def create_dataloader(txt, tokenizer, batch_size=4, max_length=256, stride=128, shuffle=True):
    # The notebook makes its tokenizer here (tiktoken.get_encoding("gpt2")); the caller passes it in.
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=shuffle)
    return dataloader


# --- In [5] -------------------------------------------------------------------------------

class CausalSelfAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key   = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout) # New
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1)) # New

    def forward(self, x):
        b, n_tokens, d_in = x.shape # New batch dimension b
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2) # Changed transpose
        attn_scores.masked_fill_(  # New, _ ops are in-place
            self.mask.bool()[:n_tokens, :n_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights) # New

        context_vec = attn_weights @ values
        return context_vec


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalSelfAttention(d_in, d_out, context_length, dropout, qkv_bias)
             for _ in range(num_heads)]
        )
        self.out_proj = nn.Linear(d_out*num_heads, d_out*num_heads)

    def forward(self, x):
        context_vec = torch.cat([head(x) for head in self.heads], dim=-1)
        return self.out_proj(context_vec)


# --- In [7] -------------------------------------------------------------------------------

class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads # Reduce the projection dim to match desired output dim

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)  # Linear layer to combine head outputs
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape

        keys = self.W_key(x) # Shape: (b, num_tokens, d_out)
        queries = self.W_query(x)
        values = self.W_value(x)

        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head

        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]

        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)

        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec) # optional projection

        return context_vec


# --- the chapter --------------------------------------------------------------------------

def read_raw_text(raw):
    """with open(path, "r", encoding="utf-8") as f: raw_text = f.read(), for bytes raw."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "small-text-sample.txt")
        with open(path, "wb") as f:
            f.write(raw)
        with open(path, "r", encoding="utf-8") as f:
            return f.read()


def _seed_site(run, site, book_seed):
    """torch.manual_seed(book_seed) at `site` (the C's manual_seed_in_process)."""
    seed = run.seeds.get(site, book_seed)
    run._unused_seeds.discard(site)
    run.attrs[f"{site}.seed"] = str(int(seed))
    torch.manual_seed(seed)


def ch03_mha_data_loading(run, ins, text=None):
    """text: the configuration's own text (bytes), recorded as the `text`
    attribute; None for the book's small-text-sample.txt."""
    # In [2]. The process starts: its default generator at torch.initial_seed().
    seed = run.seeds.get(None, BOOK_INITIAL_SEED)
    run._unused_seeds.discard(None)
    run.attrs["seed"] = str(int(seed))
    torch.manual_seed(seed)
    if run.skip:  # draws by earlier cells of the process (--skip): one word per float32 torch.rand
        run.attrs["skip"] = int(run.skip)
        torch.rand(run.skip)
    if text is None:
        raw = open(BOOK_TEXT, "rb").read()
    else:
        raw = text
        run.attrs["text"] = raw.decode("utf-8")
    raw_text = read_raw_text(raw)
    tokenizer = JsTiktokenGPT2()
    try:
        tokenizer.encode(raw_text)  # encoded_text: used no further
    except ValueError:
        pass  # the C chapter says so in a note line and goes on

    vocab_size = 50257
    output_dim = run.setting_int("output_dim", 256)
    max_len = 1024
    context_length = max_len

    token_embedding_layer = run.module("token_embedding_layer", nn.Embedding(vocab_size, output_dim))
    pos_embedding_layer = run.module("pos_embedding_layer", torch.nn.Embedding(context_length, output_dim))

    max_length = run.setting_int("max_length", 4)
    batch_size = run.setting_int("batch_size", 8)
    stride = run.setting_int("stride", max_length)
    dataloader = create_dataloader(raw_text, tokenizer, batch_size=batch_size, max_length=max_length, stride=stride)
    run.keep_long("token_ids", torch.tensor(tokenizer.token_ids, dtype=torch.int64))

    # In [3]
    for batch in dataloader:
        x, y = batch

        token_embeddings = token_embedding_layer(x)
        pos_embeddings = pos_embedding_layer(torch.arange(max_length))

        input_embeddings = token_embeddings + pos_embeddings

        break
    run.keep_long("x", x)
    run.keep_long("y", y)
    run.keep("token_embeddings", token_embeddings)
    run.keep("pos_embeddings", pos_embeddings)
    run.keep("input_embeddings", input_embeddings)

    # In [6]
    with run:
        _seed_site(run, "variant_a", 123)
        context_length = max_length
        d_in = output_dim
        num_heads = run.setting_int("num_heads", 2)
        d_out = d_in // num_heads
        mha = run.module("variant_a.mha", MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, num_heads))
        batch = input_embeddings
        context_vecs = mha(batch)
        run.keep("variant_a.context_vecs", context_vecs)

        # In [8]
        _seed_site(run, "variant_b", 123)
        context_length = max_length
        d_in = output_dim
        d_out = d_in
        mha = run.module("variant_b.mha", MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=num_heads))
        batch = input_embeddings
        context_vecs = mha(batch)
        run.keep("variant_b.context_vecs", context_vecs)
    return run


# --- the sweep: other texts, windows, batches, widths, heads and seeds ---------------------

SWEEP_TEXTS = {
    # a text tiktoken's encode() refuses (<|endoftext|>), with CRLF and lone CR
    # newlines (text mode reads both as "\n"), accents, CJK, emoji, digits, a contraction
    "mixed": ("Caf\u00e9 na\u00efve r\u00e9sum\u00e9 -- it's 2024.\r\nDocument one ends here.<|endoftext|>"
              "Document two: \u4f60\u597d\uff0c\u4e16\u754c\uff01 \U0001F600\U0001F680 costs $3.50\r"
              "  and   spaces\t\ttabs\n\nThe end, isn't it?\r\n").encode("utf-8"),
    # exactly max_length + 1 = 5 tokens: one window, a batch of one
    "five": b"one two three four five",
}


def _book_text():
    return open(BOOK_TEXT, "rb").read()


def sweep_configs():
    """[(group name, text bytes, settings, seeds)]."""
    book = _book_text()
    out = [
        # the book's text, other windows, batches and widths
        ("data_seed0_len8_stride2_b4_out32_h4_book", book,
         dict(max_length=8, stride=2, batch_size=4, output_dim=32, num_heads=4), {None: 0}),
        ("data_seed-1_len16_stride16_b3_out12_h3_book", book,
         dict(max_length=16, stride=16, batch_size=3, output_dim=12, num_heads=3), {None: -1}),
        # stride above max_length: tokens skipped between windows; a short last batch exists
        ("data_seed18446744073709551615_len3_stride7_b8_out8_h1_book", book,
         dict(max_length=3, stride=7, batch_size=8, output_dim=8, num_heads=1), {None: 2**64 - 1}),
        # another text: refused by encode(), read with newline translation
        ("data_seed123_len4_stride1_b8_out16_h2_mixed", SWEEP_TEXTS["mixed"],
         dict(max_length=4, stride=1, batch_size=8, output_dim=16, num_heads=2), {None: 123}),
        # one window only
        ("data_seed42_len4_stride4_b8_out256_h2_five", SWEEP_TEXTS["five"], {}, {None: 42}),
        # the two torch.manual_seed(123) sites given other seeds
        ("data_seed7_len4_stride4_b2_out24_h6_book_sites", book,
         dict(batch_size=2, output_dim=24, num_heads=6), {None: 7, "variant_a": 2**32 + 123, "variant_b": -5}),
    ]
    return out
