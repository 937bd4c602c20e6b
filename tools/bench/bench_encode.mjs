// bench_encode.mjs: js-tiktoken's whole process on a text, for
// tools/bench/bench_tokenize.py: read FILE as UTF-8, encode it with
// getEncoding("gpt2") and allowed_special ["<|endoftext|>"] (the dataset's
// tokenization), print the number of ids.
//
//   node tools/bench/bench_encode.mjs FILE
import fs from "node:fs";
import { getEncoding } from "js-tiktoken";

const text = fs.readFileSync(process.argv[2], "utf8");
process.stdout.write(`${getEncoding("gpt2").encode(text, ["<|endoftext|>"]).length}\n`);
