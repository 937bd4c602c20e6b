"""variants.py: the chapters, and the book's variants of each (chapters/chapters.txt)."""

import torch

from . import chapters as chapter_table  # chapters/chapters.txt
from .ch03_3 import book_inputs, ch03_3_simplified_attention
from .ch03_4 import (ch03_4_1_scaling_rationale, ch03_4_1_trainable_weights, ch03_4_2_self_attention_v1,
                     ch03_4_2_self_attention_v2)
from .ch03_5 import ch03_5_1_causal_mask, ch03_5_2_dropout, ch03_5_3_causal_attention
from .ch03_6 import book_a, ch03_6_1_multihead_wrapper, ch03_6_2_multihead_attention
from .ch03_mha import ch03_mha_data_loading
from .ch03_bonus import ch03_bonus_mha_implementations
from .ch03_buffers import ch03_understanding_buffers
from .run import Run

# Transcripts (fixtures/book/), named by their file prefix (tools/export/export_fixtures.py).
T000 = "000_efa2f07078f272d9.txt"
T001 = "001_0f0553d38278198f.txt"
T002 = "002_264268caed6f9ca7.txt"
T003 = "003_bf56d3c9ab88b228.txt"
T004 = "004_e8e336bf22e41ef3.txt"

RUNNERS = {f.__name__: f for f in (
    ch03_3_simplified_attention, ch03_4_1_trainable_weights, ch03_4_1_scaling_rationale,
    ch03_4_2_self_attention_v1, ch03_4_2_self_attention_v2, ch03_5_1_causal_mask, ch03_5_2_dropout,
    ch03_5_3_causal_attention, ch03_6_1_multihead_wrapper, ch03_6_2_multihead_attention,
    ch03_mha_data_loading, ch03_bonus_mha_implementations, ch03_understanding_buffers)}


def run_chapter(chapter, ins, settings=None, seeds=None, skip=0, **kw):
    run = Run(chapter, settings, seeds, skip)
    RUNNERS[chapter](run, ins, **kw)
    if run.unread_settings():
        raise SystemExit(f"export_fixtures: {chapter} reads no setting {', '.join(run.unread_settings())}")
    if run._unused_seeds:
        raise SystemExit(f"export_fixtures: {chapter} has no seeding site "
                         f"{', '.join(s or '(main)' for s in sorted(run._unused_seeds, key=str))}")
    return run


# --------------------------------------------------------------------------
# The book's variants: one fixture per (chapter, variant) of chapters.txt.
# For each: the transcript cells it mirrors, and how it differs from the
# book's own settings, seeds and inputs.

def _v(mirrors, inputs=None, settings=None, seeds=None, skip=0, **kw):
    return dict(mirrors=mirrors, inputs=inputs or {}, settings=settings or {}, seeds=seeds or {},
                skip=skip, kw=kw)


NB = "ch03.ipynb"
EX = "exercise-solutions.ipynb"
MHA = "multihead-attention.ipynb"
IMPL = "mha-implementations.ipynb"
BUF = "understanding-buffers.ipynb"

VARIANTS = {
    ("ch03_3_simplified_attention", "book"): _v(
        f"section 3.3.1-3.3.2 (self-attention without trainable weights): {NB} In [2]-In [14]; "
        f"{T001} In [6], In [10], In [14] (retrieval practice: attn_scores_1, attn_weights_1, context_vec_1); "
        "scaled_scores_2 and the two softmaxes of it are litattn's own cell (the book's remark on extreme values)"),
    ("ch03_4_1_trainable_weights", "seed123"): _v(
        f"section 3.4.1 with torch.manual_seed(123): {NB} In [15]-In [22]; {T004} In [2]-In [14], In [17] "
        f"(queries, attn_scores); {T000} In [22]-In [31]; {T003} (the book's text)"),
    ("ch03_4_1_trainable_weights", "seed42"): _v(
        f"section 3.4.1 with torch.manual_seed(42): {T001} In [48]-In [68]", seeds={None: 42}),
    ("ch03_4_1_scaling_rationale", "book"): _v(
        f"section 3.4.1, the rationale behind scaled dot-product attention: {T004} In [15] "
        "(In [16]'s unseeded NumPy variance demo is not exported)"),
    ("ch03_4_2_self_attention_v1", "seed123"): _v(
        f"section 3.4.2 SelfAttention_v1 after torch.manual_seed(123): {NB} In [23]; {T004} In [None] "
        f"(line 233); {T002} has the same code but prints nothing"),
    ("ch03_4_2_self_attention_v1", "seed123_continued"): _v(
        f"section 3.4.2 SelfAttentionV1 built without re-seeding: {T000} In [32]-In [33], after In [25]'s "
        "torch.manual_seed(123) and three torch.rand(3, 2) (18 draws)", skip=18, continued=True),
    ("ch03_4_2_self_attention_v1", "seed42"): _v(
        f"section 3.4.2 SelfAttention_v1 after torch.manual_seed(42): {T001} In [69]-In [70]", seeds={None: 42}),
    ("ch03_4_2_self_attention_v2", "seed789"): _v(
        f"section 3.4.2 SelfAttention_v2 after torch.manual_seed(789): {NB} In [24]; {T000} In [40]-In [41]; "
        f"{T004} In [None] (line 260), In [24]; Exercise 3.1: {EX} In [2]-In [7] (seed 123); "
        "exercise_3_1.torch.equal(...) is litattn's own cell"),
    ("ch03_4_2_self_attention_v2", "seed42"): _v(
        f"section 3.4.2 SelfAttention_v2 after torch.manual_seed(42): {T001} In [92]-In [95]; "
        f"Exercise 3.1 as in {EX} In [2]-In [7] (seed 123)", seeds={None: 42}),
    ("ch03_5_1_causal_mask", "seed789"): _v(
        f"section 3.5.1 (causal attention mask): {NB} In [25]-In [30], on In [24]'s SelfAttention_v2 "
        "(torch.manual_seed(789))"),
    ("ch03_5_2_dropout", "seed123"): _v(
        f"section 3.5.2 (dropout): {NB} In [31]-In [32], nn.Dropout(0.5) after torch.manual_seed(123), "
        "on In [30]'s causal attention weights (In [24]'s SelfAttention_v2, torch.manual_seed(789))"),
    ("ch03_5_3_causal_attention", "seed123"): _v(
        f"section 3.5.3 (CausalAttention): {NB} In [33]-In [34]"),
    ("ch03_6_1_multihead_wrapper", "seed123"): _v(
        f"section 3.6.1 (MultiHeadAttentionWrapper): {NB} In [35]; Exercise 3.2 ({EX}, markdown): "
        "the current CausalAttention (softmax over dim=-1) with d_out = 1"),
    ("ch03_6_1_multihead_wrapper", "recorded"): _v(
        f"section 3.6.1: {NB} In [35]; Exercise 3.2's recorded output block in {EX}: CausalAttention as it "
        "was when that output was recorded (rasbt/LLMs-from-scratch c400f77, softmax over dim=1)",
        settings={"exercise_3_2.softmax_dim": 1}),
    ("ch03_6_2_multihead_attention", "seed123"): _v(
        f"section 3.6.2 (MultiHeadAttention): {NB} In [36]-In [38]; Exercise 3.3 ({EX}, markdown): "
        "MultiHeadAttention(768, 768, 1024, 0.0, 12) after torch.manual_seed(123), count_parameters "
        "2360064; beyond the book, forward on x = torch.rand(1, 1024, 768) drawn next"),
    ("ch03_6_2_multihead_attention", "gpt2_dropout"): _v(
        f"section 3.6.2: {NB} In [36]-In [38]; Exercise 3.3 as in the seed123 variant but with dropout 0.1 "
        "in training mode: MultiHeadAttention(768, 768, 1024, 0.1, 12), forward on x = "
        "torch.rand(1, 1024, 768)", settings={"exercise_3_3.dropout": 0.1}),
    ("ch03_mha_data_loading", "book"): _v(
        f"{MHA} In [2]-In [8] (Multi-head Attention Plus Data Loading) on fixtures/gpt2/small-text-sample.txt: "
        "token ids from npm js-tiktoken (gpt2), GPTDatasetV1(max_length=4, stride=4), DataLoader(batch_size=8, "
        "shuffle=True), nn.Embedding(50257, 256) and nn.Embedding(1024, 256) drawn from the process's initial "
        "seed (the `seed` attribute, torch.initial_seed()), both multi-head classes after torch.manual_seed(123)"),
    ("ch03_bonus_mha_implementations", "small"): _v(
        f"{IMPL} (Comparing Efficient Multi-Head Attention Implementations) at batch_size = 2, context_len = 37 (a prime: partial blocks and lanes), num_heads = 8 (head_dim 96: sqrt(96) "
        "is no power of two, so that dividing before or after the product gives other bits): "
        "embeddings = torch.randn(2, 37, 768) after torch.manual_seed(123), then every class, 8 heads, in the "
        "notebook's order (sections 1-8; 5 and 6 made but not run: torch 1.13 has no scaled_dot_product_attention), and "
        "out = <instance>(embeddings) of 1-4, 7 and 8", settings={"batch_size": 2, "context_len": 37, "num_heads": 8}),
    ("ch03_bonus_mha_implementations", "book"): _v(
        f"{IMPL} In [1]-In [11] at the notebook's size: embeddings = torch.randn(8, 1024, 768) after "
        "torch.manual_seed(123), then every class in the notebook's order (sections 1-8; 5 and 6 made but not "
        "run: torch 1.13 has no scaled_dot_product_attention; 9 needs torch >= 2.5 and CUDA), and "
        "out = <instance>(embeddings) of 1-4, 7 and 8"),
    ("ch03_understanding_buffers", "seed123"): _v(
        f"{BUF} In [1]-In [16] (Understanding PyTorch Buffers) on the CPU: CausalAttentionWithoutBuffers and "
        "CausalAttentionWithBuffer on torch.stack((inputs, inputs)), every module made from one "
        "torch.manual_seed(123) stream (the two made in In [15] and In [16] too); the mask changed in place, "
        "each state_dict through torch.save and torch.load into a new module"),
}


def default_inputs(chapter):
    """The book's inputs of a chapter."""
    if chapter == "ch03_4_1_scaling_rationale":
        return {"tensor": torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5])}  # 004 In [15]
    if chapter in ("ch03_mha_data_loading", "ch03_bonus_mha_implementations"):
        return {}  # it reads a text, or draws its input
    ins = {"inputs": book_inputs()}
    if chapter == "ch03_6_2_multihead_attention":
        ins["a"] = book_a()
    return ins


def book_fixtures():
    """[(chapter, variant, spec)] in chapters.txt's order; every variant known."""
    out = []
    for c in chapter_table.table():
        if c.program not in RUNNERS:
            raise SystemExit(f"export_fixtures: chapters.txt lists {c.program}, which this exporter does not run")
        for v in c.variants:
            if (c.program, v) not in VARIANTS:
                raise SystemExit(f"export_fixtures: chapters.txt lists variant {v} of {c.program}, "
                                 "which this exporter does not make")
            out.append((c.program, v, VARIANTS[(c.program, v)]))
    listed = {(p, v) for p, v, _ in out}
    for key in VARIANTS:
        if key not in listed:
            raise SystemExit(f"export_fixtures: variant {key[1]} of {key[0]} is not in chapters.txt")
    for p in RUNNERS:
        if p not in chapter_table.programs():
            raise SystemExit(f"export_fixtures: {p} is not in chapters.txt")
    return out


def run_variant(chapter, spec):
    ins = default_inputs(chapter)
    ins.update(spec["inputs"])
    return run_chapter(chapter, ins, spec["settings"], spec["seeds"], spec["skip"], **spec["kw"])
