"""sweep.py: sweep.h5, every chapter beyond the book's shapes, seeds and inputs."""

import torch

from . import SCRIPT
from .ch03_6 import book_a
from .ch03_mha import sweep_configs as data_sweep_configs
from .variants import run_chapter
from .write import new_file, new_group, provenance, set_attrs, write_fixture

# --------------------------------------------------------------------------
# The sweep: every chapter beyond the book's shapes, seeds and inputs. One
# group per configuration, each a complete fixture of one chapter.

# v1 / v2 (the 77 configurations of the earlier schema, same inputs).
SWEEP_SEEDS = [0, 1, 42, 123, 789, 2**32 + 123, -1, 2**63 - 1]
SWEEP_T = [1, 2, 6, 7, 8, 9, 16, 17, 33]
SWEEP_DIN = [1, 3, 8, 17, 64]
SWEEP_DOUT = [1, 2, 4, 16]

CH_V1, CH_V2 = "ch03_4_2_self_attention_v1", "ch03_4_2_self_attention_v2"
CH_MASK, CH_DROP = "ch03_5_1_causal_mask", "ch03_5_2_dropout"
CH_CA, CH_WRAP, CH_MHA = "ch03_5_3_causal_attention", "ch03_6_1_multihead_wrapper", "ch03_6_2_multihead_attention"


def v1_v2_configs():
    """(chapter, seed, T, d_in, d_out, qkv_bias or None) in file order.

    Cyclic with pairwise different periods (8 seeds, 9 token counts, 5 input
    sizes, 4 output sizes) so every value of every axis appears several
    times in changing company, then a few hand-picked meetings of the extremes.
    """
    v1, v2 = [], []
    for i in range(48):
        v2.append((SWEEP_SEEDS[i % 8], SWEEP_T[i % 9], SWEEP_DIN[i % 5],
                   SWEEP_DOUT[(i // 3) % 4], (i // 8) % 2))
    v2 += [
        (123, 33, 64, 16, 0), (789, 33, 64, 16, 1),  # the biggest shapes meet
        (0, 1, 1, 1, 0), (2**63 - 1, 1, 1, 1, 1),  # the smallest
        (789, 6, 3, 2, 0), (42, 6, 3, 2, 1),  # the book's shapes, random inputs
        (-1, 17, 17, 16, 0), (2**32 + 123, 9, 64, 1, 1), (1, 33, 1, 16, 0), (42, 16, 64, 4, 0),
    ]
    for i in range(18):  # every token count twice
        v1.append((SWEEP_SEEDS[i % 8], SWEEP_T[(4 * i) % 9], SWEEP_DIN[i % 5],
                   SWEEP_DOUT[(i + i // 4) % 4]))
    v1 += [(123, 33, 64, 16), (123, 6, 3, 2)]  # the biggest shapes; the book's
    configs = [(CH_V1, s, t, di, do, None) for s, t, di, do in v1]
    configs += [(CH_V2, s, t, di, do, b) for s, t, di, do, b in v2]
    return configs


def _cfg(chapter, name, seeds, settings, T, d_in, inputs_seed, b=None, special=None, a=None, skip=0):
    return dict(chapter=chapter, name=name, seeds=seeds, settings=settings, skip=skip,
                inputs=dict(T=T, d_in=d_in, inputs_seed=inputs_seed, b=b, special=special, a=a))


# Seeds of the new classes' configurations: negative, 0, >= 2^32 among them.
NEW_SEEDS = [123, 0, -1, 2**32 + 123, 42, -12345, 789, 2**40 + 7, 1, 2**63 - 1, -(2**63)]


def new_class_configs():
    """CausalAttention, the wrapper, MultiHeadAttention (and the 3.5.1/3.5.2
    steps) over batch 1-4, 1-1024 tokens, 1-12 heads, head_dim 1-128, d_in up
    to 768, dropout 0 / 0.1 / 0.5 in training mode, eval mode, qkv_bias, and
    inputs with zero rows, all-negative rows and NaN."""
    out = []
    k = [20000]

    def seed_of(i):
        return NEW_SEEDS[i % len(NEW_SEEDS)]

    def nxt():
        k[0] += 1
        return k[0]

    def bname(b):
        return "stack" if b is None else str(b)

    def suffix(special):
        return f"_{special}" if special else ""

    # ---- CausalAttention (3.5.3)
    def ca(seed, b, T, ctx, d_in, d_out, p, training, bias, special=None):
        name = (f"ca_seed{seed}_b{bname(b)}_T{T}_ctx{ctx}_din{d_in}_dout{d_out}_p{p}_train{training}"
                f"_bias{bias}{suffix(special)}")
        st = dict(d_out=d_out, context_length=ctx, dropout=p, training=training, qkv_bias=bias)
        out.append(_cfg(CH_CA, name, {None: seed}, st, T, d_in, nxt(), b, special))

    Ts = [1, 2, 3, 5, 6, 7, 8, 9, 12, 16, 17, 24, 33, 48, 64]
    for i in range(22):
        T = Ts[i % len(Ts)]
        ca(seed_of(i), [None, 1, 2, 3, 4][(i + i // 5) % 5], T, T + [0, 0, 3, 0, 1, 9][i % 6],
           [1, 3, 4, 8, 17, 32, 64][i % 7], [1, 2, 3, 4, 8, 16, 64][(3 * i) % 7], [0.0, 0.1, 0.5][i % 3],
           0 if i % 5 == 4 else 1, (i // 2) % 2)
    ca(123, None, 6, 6, 3, 2, 0.0, 1, 0, "zerorows")       # the book's shapes
    ca(-1, 3, 7, 9, 1, 3, 0.5, 1, 0, "zerorows")           # d_in 1: every product of a zero row is 0 * w
    ca(0, 2, 9, 9, 3, 4, 0.1, 1, 1, "negrows")
    ca(2**32 + 123, 2, 6, 8, 3, 2, 0.5, 1, 0, "nan")
    ca(42, 1, 5, 5, 768, 16, 0.1, 1, 1)                   # GPT-2's d_in
    ca(7, 1, 1024, 1024, 4, 4, 0.1, 1, 0)                 # the longest context

    # ---- MultiHeadAttentionWrapper (3.6.1) and Exercise 3.2
    def wrap(seed, ex_seed, b, T, ctx, d_in, d_out, heads, p, training, bias, ex_d_out, softmax_dim,
             special=None):
        name = (f"wrapper_seed{seed}_b{bname(b)}_T{T}_ctx{ctx}_din{d_in}_dout{d_out}_h{heads}_p{p}"
                f"_train{training}_bias{bias}_ex{ex_d_out}dim{softmax_dim}{suffix(special)}")
        st = {"d_out": d_out, "context_length": ctx, "dropout": p, "training": training, "qkv_bias": bias,
              "num_heads": heads, "exercise_3_2.d_out": ex_d_out, "exercise_3_2.softmax_dim": softmax_dim}
        out.append(_cfg(CH_WRAP, name, {None: seed, "exercise_3_2": ex_seed}, st, T, d_in, nxt(), b, special))

    Tw = [1, 2, 4, 6, 7, 8, 9, 13, 16, 17, 24, 32]
    for i in range(18):
        T = Tw[i % len(Tw)]
        wrap(seed_of(i + 3), seed_of(i + 7), [None, 1, 2, 3, 4][(i + i // 5) % 5], T, T + [0, 2, 0, 5][i % 4],
             [1, 3, 5, 8, 16, 32][i % 6], [1, 2, 3, 4, 8][i % 5], [1, 2, 3, 4, 5, 6, 8, 12][i % 8],
             [0.0, 0.1, 0.5][(i + 1) % 3], 0 if i % 6 == 5 else 1, (i // 3) % 2, [1, 2, 3][i % 3],
             [-1, -1, 1, -1, 0, 2, -2, -3, 1][i % 9])
    wrap(123, 123, None, 6, 6, 3, 2, 2, 0.0, 1, 0, 1, 1, "zerorows")
    wrap(-1, 0, 2, 8, 8, 3, 2, 3, 0.5, 1, 1, 1, -1, "nan")
    wrap(11, 12, 1, 520, 640, 8, 2, 2, 0.5, 1, 0, 1, -1)  # long, fewer tokens than the context

    # ---- MultiHeadAttention (3.6.2) and Exercise 3.3 (its own small module)
    def mha(seed, b, T, ctx, d_in, heads, head_dim, p, training, bias, ex, special=None, a="book"):
        d_out = heads * head_dim
        name = (f"mha_seed{seed}_b{bname(b)}_T{T}_ctx{ctx}_din{d_in}_dout{d_out}_h{heads}_p{p}"
                f"_train{training}_bias{bias}{suffix(special)}")
        ex_seed, ex_ctx, ex_tokens, ex_d_in, ex_heads, ex_hd, ex_p, ex_training, ex_bias, ex_b = ex
        st = {"d_out": d_out, "context_length": ctx, "dropout": p, "training": training, "qkv_bias": bias,
              "num_heads": heads,
              "exercise_3_3.context_length": ex_ctx, "exercise_3_3.d_in": ex_d_in,
              "exercise_3_3.d_out": ex_heads * ex_hd, "exercise_3_3.num_heads": ex_heads,
              "exercise_3_3.dropout": ex_p, "exercise_3_3.qkv_bias": ex_bias,
              "exercise_3_3.training": ex_training, "exercise_3_3.batch_size": ex_b,
              "exercise_3_3.tokens": ex_tokens}
        out.append(_cfg(CH_MHA, name, {None: seed, "exercise_3_3": ex_seed}, st, T, d_in, nxt(), b, special, a))

    Tm = [1, 2, 3, 4, 6, 7, 8, 9, 11, 16, 17, 25, 33, 64]
    for i in range(24):
        heads = [1, 2, 3, 4, 6, 8, 12][i % 7]
        T = Tm[i % len(Tm)] if heads < 8 else min(Tm[i % len(Tm)], 17)
        hd = [1, 2, 3, 4, 8, 16, 5][(i + i // 7) % 7]
        while heads * hd > 64:
            hd //= 2
        ex_ctx = [4, 8, 5, 16, 1, 9][i % 6]
        ex = (seed_of(i + 5), ex_ctx, max(1, ex_ctx - [0, 1, 3][i % 3]), [3, 8, 16, 5][i % 4],
              [1, 2, 4, 3][i % 4], [1, 2, 4, 8][(i // 2) % 4], [0.0, 0.1, 0.5][(i + 2) % 3],
              0 if i % 7 == 3 else 1, i % 2, [1, 2, 3, 4][(i // 3) % 4])
        a = "book" if i % 3 == 0 else ([1, 2, 3][i % 3], [2, 3, 4][i % 3], [1, 3, 5, 8][i % 4], [1, 4, 7][i % 3])
        mha(seed_of(i + 1), [None, 1, 2, 3, 4][(i + i // 5) % 5], T, T + [0, 1, 0, 4, 7][i % 5],
            [1, 2, 3, 8, 16, 32, 64][(2 * i) % 7], heads, hd, [0.0, 0.1, 0.5][i % 3], 0 if i % 5 == 2 else 1,
            (i // 4) % 2, ex, a=a)
    small_ex = (123, 8, 8, 8, 2, 4, 0.0, 1, 0, 1)
    mha(123, None, 6, 6, 3, 2, 1, 0.0, 1, 0, small_ex, "zerorows")
    mha(2**32 + 123, 2, 5, 7, 1, 2, 2, 0.1, 1, 0, small_ex, "zerorows")
    mha(-5, 3, 6, 6, 4, 2, 3, 0.5, 1, 1, small_ex, "negrows")
    mha(0, 2, 7, 9, 3, 3, 2, 0.5, 1, 0, small_ex, "nan")
    mha(99, 1, 16, 16, 64, 1, 128, 0.1, 1, 1, small_ex)                 # head_dim 128
    mha(123, 2, 8, 8, 768, 12, 4, 0.0, 0, 0, small_ex)                  # GPT-2's d_in, 12 heads
    mha(123, None, 6, 6, 3, 2, 1, 0.0, 1, 0,
        (123, 32, 16, 768, 12, 64, 0.1, 1, 1, 1))                       # GPT-2's module, 16 tokens
    mha(5, 1, 1024, 1024, 16, 2, 8, 0.1, 1, 0, small_ex)                # the longest context
    mha(6, None, 9, 12, 8, 4, 2, 0.0, 0, 1,
        (-7, 1024, 600, 32, 4, 8, 0.5, 1, 0, 1))                        # Exercise 3.3 at 600 of 1024 tokens

    # ---- the causal mask steps (3.5.1) and dropout (3.5.2) on other inputs
    def mask(seed, T, d_in, d_out, bias, special=None):
        name = f"mask_seed{seed}_T{T}_din{d_in}_dout{d_out}_bias{bias}{suffix(special)}"
        out.append(_cfg(CH_MASK, name, {None: seed}, dict(d_out=d_out, qkv_bias=bias), T, d_in, nxt(),
                        special=special))

    mask(789, 1, 3, 2, 0)
    mask(-1, 17, 8, 4, 1)
    mask(2**32 + 789, 9, 1, 3, 0, "zerorows")
    mask(0, 7, 3, 2, 0, "negrows")
    mask(42, 6, 3, 2, 1, "nan")

    def drop(seed, sa_seed, T, d_in, d_out, p, special=None, skip=0):
        name = (f"dropout_seed{seed}_sa{sa_seed}_T{T}_din{d_in}_dout{d_out}_p{p}{suffix(special)}"
                + (f"_skip{skip}" if skip else ""))
        out.append(_cfg(CH_DROP, name, {None: seed, "sa_v2": sa_seed}, dict(d_out=d_out, dropout=p), T, d_in,
                        nxt(), special=special, skip=skip))

    drop(123, 789, 9, 3, 2, 0.1)
    drop(0, -1, 33, 8, 4, 0.5)
    drop(2**32 + 1, 7, 4, 3, 2, 0.0)
    drop(-3, 789, 6, 3, 2, 0.5, "nan")
    # p = 0.025, 0.123: the kept scale 1.0f / (float)(1 - p) differs in its
    # last bit from (float)(1.0 / (1 - p)), a scale rounded in double.
    drop(11, 789, 12, 3, 2, 0.025)
    ca(5, 2, 9, 9, 3, 4, 0.123, 1, 0)
    # The continuing stream (--skip K): K draws discarded after the first
    # seeding only; the chapter seeds six times, and each later
    # torch.manual_seed starts its stream afresh.
    drop(123, 789, 9, 3, 2, 0.5, skip=5)
    return out


def sweep_configs():
    out = []
    seen = set()
    for k, (chapter, seed, T, d_in, d_out, qkv_bias) in enumerate(v1_v2_configs()):
        name = f"{'v1' if chapter == CH_V1 else 'v2'}_seed{seed}_T{T}_din{d_in}_dout{d_out}"
        st = dict(d_out=d_out)
        if qkv_bias is not None:
            name += f"_bias{qkv_bias}"
            st["qkv_bias"] = qkv_bias
        if name in seen:
            continue
        seen.add(name)
        # one private input stream per configuration
        out.append(_cfg(chapter, name, {None: seed}, st, T, d_in, 10000 + k))
    # Signs of zero and NaN in v1 / v2.
    for chapter, seed, T, d_in, d_out, bias, special, inputs_seed in [
            (CH_V1, 123, 9, 1, 4, None, "zerorows", 10101), (CH_V1, 0, 7, 3, 2, None, "negrows", 10102),
            (CH_V2, 789, 9, 1, 4, 0, "zerorows", 10103), (CH_V2, 789, 9, 3, 4, 1, "zerorows", 10104),
            (CH_V2, 42, 7, 3, 2, 0, "negrows", 10105), (CH_V2, 123, 6, 3, 2, 0, "nan", 10106),
            (CH_V2, 1, 9, 17, 4, 0, "nan", 10107)]:
        name = f"{'v1' if chapter == CH_V1 else 'v2'}_seed{seed}_T{T}_din{d_in}_dout{d_out}"
        st = dict(d_out=d_out)
        if bias is not None:
            name += f"_bias{bias}"
            st["qkv_bias"] = bias
        out.append(_cfg(chapter, f"{name}_{special}", {None: seed}, st, T, d_in, inputs_seed, special=special))
    # §3.3's dot products (torch.dot, sdot) on a zero query (inputs[1]) and
    # all-negative rows: every product is -0, and +0 + -0 + ... is +0, which
    # a sum started at the first product would print as -0.
    for T, d_in, inputs_seed in [(3, 3, 10201), (6, 1, 10202), (9, 5, 10203)]:
        out.append(_cfg("ch03_3_simplified_attention", f"simple_T{T}_din{d_in}_zeroquery", {}, {}, T, d_in,
                        inputs_seed, special="zeroquery"))
    out += new_class_configs()
    names = [c["name"] for c in out]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, dup
    return out


def apply_special(x, special):
    """Rows of zeros, rows of negative values, or one NaN, in a (T, d) or
    (b, T, d) input; the rest stays uniform in [-1, 1)."""
    T = x.shape[-2]
    rows = sorted({0, T // 2, T - 1}) if T > 1 else [0]
    if special == "zerorows":
        x[..., rows[:2], :] = 0.0
    elif special == "negrows":
        x[..., rows[-2:], :] = -x[..., rows[-2:], :].abs() - 0.125
    elif special == "zeroquery":  # row 1 (the query of §3.3) zero, the others all negative
        x[...] = -x.abs() - 0.125
        x[..., 1, :] = 0.0
    elif special == "nan":
        x[..., T // 2, x.shape[-1] // 2] = float("nan")
    elif special:
        raise ValueError(special)
    return x


def sweep_inputs(spec):
    """The inputs of a configuration, from a private generator seeded with
    inputs_seed (the default generator, the weights' stream, is untouched)."""
    g = torch.Generator().manual_seed(spec["inputs_seed"])
    T, d_in, b = spec["T"], spec["d_in"], spec["b"]
    ins = {}
    if b is None:
        ins["inputs"] = apply_special(torch.rand(T, d_in, generator=g) * 2 - 1, spec["special"])
    else:
        ins["batch"] = apply_special(torch.rand(b, T, d_in, generator=g) * 2 - 1, spec["special"])
        ins["inputs"] = ins["batch"][0].clone()
    a = spec["a"]
    if a == "book":
        ins["a"] = book_a()
    elif a is not None:
        ins["a"] = torch.rand(*a, generator=g)
    return ins


def sweep_group(g, cfg, command):
    ins = sweep_inputs(cfg["inputs"])
    if cfg["chapter"] == CH_MHA and "a" not in ins:
        ins["a"] = book_a()
    run = run_chapter(cfg["chapter"], ins, cfg["settings"], cfg["seeds"], cfg["skip"])
    spec = cfg["inputs"]
    what = (f"torch.rand({spec['T']}, {spec['d_in']})" if spec["b"] is None else
            f"a batch torch.rand({spec['b']}, {spec['T']}, {spec['d_in']})")
    what += " * 2 - 1" + (f", {spec['special']}" if spec["special"] else "")
    write_fixture(g, run, "sweep", f"no transcript: {cfg['chapter']} beyond the book's sizes, seeds and "
                  f"inputs (sweep configuration {cfg['name']}; inputs {what})", command,
                  dict(inputs_seed=spec["inputs_seed"]))


def write_sweep(path):
    configs = sweep_configs()
    chapters_in = []
    for c in configs:
        if c["chapter"] not in chapters_in:
            chapters_in.append(c["chapter"])
    with new_file(path) as f:
        set_attrs(f, dict(chapter=",".join(chapters_in), variant="sweep",
                          mirrors="no transcript: the chapters beyond the book's shapes, seeds and inputs; "
                                  "one group per configuration, each a complete fixture of one chapter",
                          **provenance(), command=SCRIPT))
        for cfg in configs:
            sweep_group(new_group(f, cfg["name"]), cfg, SCRIPT)
    return len(configs)


def write_data_sweep(path):
    """sweep_data_loading.h5: one group per configuration, each a complete
    fixture of ch03_mha_data_loading with its own `text`."""
    chapter = "ch03_mha_data_loading"
    with new_file(path) as f:
        set_attrs(f, dict(chapter=chapter, variant="sweep",
                          mirrors="no transcript: multihead-attention.ipynb In [2]-In [8] beyond the book's text, "
                                  "windows, batches, widths, heads and seeds; one group per configuration",
                          **provenance(), command=SCRIPT))
        for name, text, settings, seeds in data_sweep_configs():
            run = run_chapter(chapter, {}, settings, seeds, text=text)
            write_fixture(new_group(f, name), run, "sweep",
                          f"no transcript: {chapter} beyond the book's settings (sweep configuration {name})", SCRIPT)
