// encode_ids.mjs: the token ids of texts, from npm's js-tiktoken (not our
// tokenizer), for the fixture exporter (tools/export/ch03_mha.py).
//
//   node tools/export/encode_ids.mjs FILE...
//
// Each FILE holds one text as UTF-8 (the exporter writes the string Python's
// open(..., "r", encoding="utf-8").read() returned). For each, one line of
// JSON on stdout:
//   {"allowed": [ids of encode(text, ["<|endoftext|>"])],
//    "raises": true if encode(text) throws (it refuses <|endoftext|>), else false}
// As tools/cases/tokenizer_cases.mjs does, a text holding U+0085 or U+FEFF is
// encoded with the pattern's \s spelled out as Unicode White_Space, which is
// what tiktoken's Rust regex means by \s (lib/text/README.md).
import fs from "node:fs";
import { getEncoding } from "js-tiktoken";
import { Tiktoken } from "js-tiktoken/lite";
import gpt2 from "js-tiktoken/ranks/gpt2";

const stock = getEncoding("gpt2");
const WS = "\\t-\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000";
const wsPattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${WS}\\p{L}\\p{N}]+|[${WS}]+(?![^${WS}])|[${WS}]+`;
const wsEnc = new Tiktoken({ ...gpt2, pat_str: wsPattern });
const JS_ONLY_SPACE = /[\u0085\uFEFF]/u;

const files = process.argv.slice(2);
if (!files.length) {
  console.error("usage: node tools/export/encode_ids.mjs FILE...");
  process.exit(2);
}
for (const f of files) {
  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(fs.readFileSync(f));
  const enc = JS_ONLY_SPACE.test(text) ? wsEnc : stock;
  let raises = false;
  try {
    enc.encode(text);
  } catch (e) {
    raises = true;
  }
  process.stdout.write(JSON.stringify({ allowed: enc.encode(text, ["<|endoftext|>"]), raises }) + "\n");
}
