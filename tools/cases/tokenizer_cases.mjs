// tokenizer_cases.mjs: the reference ids for tests/test_tokenizer.c, from a
// tokenizer that is not ours: npm's js-tiktoken (version pinned by
// tools/package.json and package-lock.json), getEncoding("gpt2").
//
//   npm ci --prefix tools            (once; tools/node_modules is not committed)
//   node tools/cases/tokenizer_cases.mjs fixtures/tokenizer_cases.txt
//
// The cases: the book's small-text-sample.txt (fixtures/gpt2/), whole and
// line by line; hand-picked edges of GPT-2's pattern and of <|endoftext|>;
// N_RANDOM random Unicode texts drawn from a fixed seed; special-token
// cases. Each text in up to three modes:
//
//   allow     encode(text, "all")            (bpe_encode's BPE_SPECIAL_ALLOW)
//   disallow  encode(text): throws on <|endoftext|>   (BPE_SPECIAL_DISALLOW)
//   text      encode(text, [], []), i.e. encode_ordinary   (BPE_SPECIAL_AS_TEXT)
//
// The file, after '#' comment lines at the top, is one case after another:
//
//   C <mode> <nbytes> <label>\n<nbytes bytes of UTF-8 text>\n
//   E <count> <id> <id> ...\n        the ids, or
//   X <offset>\n                     a disallowed <|endoftext|> at this byte offset
//
// Two deliberate differences from stock js-tiktoken, so that the reference
// is tiktoken's (Rust) behaviour, which ours follows (lib/text/README.md):
//   - \s: JavaScript's \s has U+FEFF and lacks U+0085; tiktoken's Rust regex
//     means Unicode White_Space. Texts with either code point are encoded by
//     js-tiktoken with the pattern's \s spelled out as White_Space (wsEnc).
//   - Unicode versions: node's ICU may know letters and digits that Unicode
//     15.0 (our tables, Debian 12's unicode-data) has not assigned yet, and
//     which those are depends on node's version (Debian 12's node 18 has
//     Unicode 15.0; newer nodes have later versions). So that every node
//     writes the same file, texts draw only code points that UnicodeData.txt
//     assigns, and, of the unassigned, the ones every Unicode version leaves
//     unassigned (the noncharacters, planes 4 to 13). The generator stops,
//     naming the code point, where node's letter or number class of an
//     assigned one differs from UnicodeData.txt's.
// Everything is drawn from a fixed seed: the file is the same on every run.
import fs from "node:fs";
import path from "node:path";
import { getEncoding } from "js-tiktoken";
import { Tiktoken } from "js-tiktoken/lite";
import gpt2 from "js-tiktoken/ranks/gpt2";

const [outFile] = process.argv.slice(2);
if (!outFile) {
  console.error("usage: node tools/cases/tokenizer_cases.mjs OUT_FILE");
  process.exit(2);
}
const N_RANDOM = 300;
const HERE = path.dirname(new URL(import.meta.url).pathname);
const ROOT = path.resolve(HERE, "..", "..");
const UCD = "/usr/share/unicode/UnicodeData.txt";
const jsTiktokenVersion = JSON.parse(fs.readFileSync(path.join(HERE, "..", "node_modules", "js-tiktoken", "package.json"), "utf8")).version;

const stock = getEncoding("gpt2");
const WS = "\\t-\\r \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000";
const wsPattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${WS}\\p{L}\\p{N}]+|[${WS}]+(?![^${WS}])|[${WS}]+`;
const wsEnc = new Tiktoken({ ...gpt2, pat_str: wsPattern });
const JS_ONLY_SPACE = /[\u0085\uFEFF]/u;

// Each code point's General_Category from UnicodeData.txt (its <..., First>/
// <..., Last> pairs expanded; "Cn" where it assigns none).
const category = new Array(0x110000).fill("Cn");
{
  let first = -1;
  for (const line of fs.readFileSync(UCD, "utf8").split("\n")) {
    const f = line.split(";");
    if (f.length < 3) continue;
    const cp = parseInt(f[0], 16);
    if (f[1].endsWith(", First>")) { first = cp; continue; }
    if (f[1].endsWith(", Last>")) { category.fill(f[2], first, cp + 1); continue; }
    category[cp] = f[2];
  }
}
const isAssigned = (cp) => category[cp] !== "Cn";
// Unassigned in every Unicode version: the noncharacters (U+FDD0..U+FDEF and
// the last two of every plane) and planes 4 to 13, which no version allots.
const alwaysUnassigned = (cp) => (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe
  || (cp >= 0x40000 && cp <= 0xdffff);
const usable = (cp) => !(cp >= 0xd800 && cp <= 0xdfff) && (isAssigned(cp) || alwaysUnassigned(cp));

// mulberry32: a small seeded generator, uniform in [0, 1).
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20240601);
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];

const range = (lo, hi) => () => {
  for (;;) {
    const cp = lo + int(hi - lo + 1);
    if (usable(cp)) return String.fromCodePoint(cp);
  }
};
const SPACES = [" ", " ", " ", "\t", "\n", "\n", "\r\n", "\r", "\u000b", "\u000c", "\u00a0",
  "\u1680", "\u2000", "\u2003", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"];
const WORDS = ["the", "The", "THE", "hello", "world", "don", "can", "I", "you", "we", "they",
  "Elara", "attention", "token", "naïve", "café", "über", "straße", "Ångström", "résumé",
  "a", "an", "of", "in", "x", "xx", "ſ", "ǅ", "ß"];
const CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Re", "'VE",
  "'M", "'LL", "'Ll", "'D", "'", "''", "'''", "\u2019s", "\u2019t", "'x", "'r", "'v", "'l", "'e"];
const PUNCT = [".", ",", "!", "?", ";", ":", "-", "--", "...", "\"", "(", ")", "[", "]", "{", "}",
  "<", ">", "|", "<|", "|>", "@", "#", "$", "%", "^", "&", "*", "_", "=", "+", "~", "`", "/", "\\",
  "\u2014", "\u2013", "\u201c", "\u201d", "\u00ab", "\u00bb", "\u00bf", "\u00a1", "\u00a7", "\u00b6"];
const EMOJI = ["\u{1F600}", "\u{1F44D}", "\u{1F44D}\u{1F3FD}", "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}",
  "\u2764\uFE0F", "\u{1F1EF}\u{1F1F5}", "\u{1F1FA}\u{1F1F8}", "\u{1F3F3}\uFE0F\u200D\u{1F308}", "\u2603",
  "\u{1F9D1}\u200D\u{1F4BB}", "#\uFE0F\u20E3", "\u{1F4A9}", "\u{1FAE0}", "\u{1F004}"];
const NUMBERS = [() => String(int(100000)), () => String(int(10)), range(0x0660, 0x0669),
  range(0x0966, 0x096f), range(0xff10, 0xff19), () => pick(["\u00b2", "\u00b3", "\u00b9", "\u00bd",
    "\u00bc", "\u2160", "\u216b", "\u2460", "\u3007", "\u{1D7CE}", "\u{10107}", "\u0f33"])];
const SCRIPTS = [range(0x41, 0x5a), range(0x61, 0x7a), range(0xc0, 0x24f), range(0x370, 0x3ff),
  range(0x400, 0x4ff), range(0x5d0, 0x5ea), range(0x620, 0x64a), range(0x900, 0x97f),
  range(0xe00, 0xe5b), range(0x3040, 0x30ff), range(0x4e00, 0x9fff), range(0xac00, 0xd7a3),
  range(0x1100, 0x11ff), range(0x10a0, 0x10ff), range(0x1e00, 0x1eff), range(0x20000, 0x2a6df),
  range(0x1d400, 0x1d7ff), range(0x10330, 0x1034a), range(0xff21, 0xff5a), range(0x13a0, 0x13f5)];
const COMBINING = [range(0x300, 0x36f), range(0x1ab0, 0x1abd), range(0x20d0, 0x20f0),
  () => "\u0301", () => "\u0308", () => "\u093f", () => "\u0e31", () => "\u200d", () => "\u200c",
  () => "\ufe0f", () => "\u{E0100}"];
// Any code point but surrogates, weighted to the planes in use.
const ANY = [range(0, 0x7f), range(0x80, 0x7ff), range(0x800, 0xffff), range(0x10000, 0x3ffff),
  range(0xe0000, 0xe01ef), range(0xf0000, 0x10ffff), range(0x10000, 0x10ffff)];

const run = (f, max) => { let s = ""; for (let i = 1 + int(max); i > 0; i--) s += f(); return s; };
const GENERATORS = [
  () => pick(WORDS), () => " " + pick(WORDS), () => pick(WORDS).toUpperCase(),
  () => pick(CONTRACTIONS), () => pick(WORDS) + pick(CONTRACTIONS),
  () => run(() => pick(SPACES), 6), () => " ".repeat(1 + int(8)), () => pick(SPACES),
  () => pick(PUNCT), () => run(() => pick(PUNCT), 4), () => pick(EMOJI), () => " " + pick(EMOJI),
  () => pick(NUMBERS)(), () => " " + pick(NUMBERS)(), () => run(() => pick(NUMBERS)(), 5),
  () => run(pick(SCRIPTS), 8), () => " " + run(pick(SCRIPTS), 6), () => pick(COMBINING)(),
  () => pick(SCRIPTS)() + pick(COMBINING)(), () => pick(ANY)(), () => run(() => pick(ANY)(), 4),
  () => "<|endoftext|>", () => pick(["<|endoftext", "|endoftext|>", "<|endoftext|>", "<|end", "<|"]),
];

// A random text of n generator draws.
function randomText(n) {
  let s = "";
  for (let i = 0; i < n; i++) s += pick(GENERATORS)();
  return s;
}

// The line of the expected outcome of one encoder on one text and mode.
function expect(enc, text, mode) {
  try {
    const ids = mode === "allow" ? enc.encode(text, "all")
      : mode === "text" ? enc.encode(text, [], []) : enc.encode(text);
    return `E ${ids.length}${ids.length ? " " + ids.join(" ") : ""}\n`;
  } catch (e) {
    const at = text.indexOf("<|endoftext|>");
    if (at < 0) throw e;
    return `X ${Buffer.byteLength(text.slice(0, at), "utf8")}\n`;
  }
}

const out = [];
const stats = { cases: 0, ws: 0, wsDiffers: 0 };
const seen = new Set();
// Adds one case per mode for text (a text seen before in that mode is skipped).
function add(label, text, modes = ["allow", "disallow", "text"]) {
  const ws = JS_ONLY_SPACE.test(text);
  const bytes = Buffer.from(text, "utf8");
  for (const mode of modes) {
    const key = mode + "\0" + text;
    if (seen.has(key)) continue;
    seen.add(key);
    const line = expect(ws ? wsEnc : stock, text, mode);
    if (ws) {
      stats.ws++;
      if (line !== expect(stock, text, mode)) stats.wsDiffers++;
    }
    out.push(Buffer.from(`C ${mode} ${bytes.length} ${label}\n`), bytes, Buffer.from("\n" + line));
    stats.cases++;
  }
}

// 1. The book's text, whole and line by line.
const sample = fs.readFileSync(path.join(ROOT, "fixtures", "gpt2", "small-text-sample.txt"), "utf8");
add("small-text-sample", sample);
sample.split("\n").forEach((line, i) => add(`small-text-sample:${i + 1}`, line, ["disallow"]));

// 2. Hand-picked edges of the pattern and of the special token (the list
// the tokenizer was first checked with).
const EDGES = [
  "", " ", "  ", "   ", "\n", "\n\n", "\r\n", "\r\n\r\n", " \n", "\n ", "\t", "\t\t", "a", " a",
  "  a", "   a", "a ", "a  ", "a   ", " a ", "\ta", "\t a", " \ta", "a\n\nb", "a \n b", "a\u00a0b",
  "a\u00a0\u00a0b", "a \u00a0b", "a\u3000b", "a\u3000\u3000 b", "x\u2028y", "don't", "DON'T", "Don'T",
  "I'm", "I'M", "we'll", "WE'LL", "you've", "YOU'VE", "they're", "THEY'RE", "he'd", "HE'D", "it's",
  "IT'S", "'s", "'S", "''s", "'''", "'", "' s", " 's", "'sa", "'ll'll", "'lL", "o'clock", "rock'n'roll",
  "123", " 123", "1 2 3", "a1b2", "12ab", "½", " ½", "x²", "Ⅻ", "٣٤", " ٣", "¿Qué?", "¡Hola!", "...",
  " ...", "!!!", " !!!", "a!b", "a !b", "a! b", "e\u0301", " e\u0301", "\u0301", " \u0301", "\u0301a",
  "\u{1F600}", " \u{1F600}", "\u{1F600}\u{1F600}", "a\u{1F600}b", "\u{1F468}\u200D\u{1F469}",
  "naïve café", "日本語のテキスト", " 日本語", "한국어 텍스트", "Привет, мир!", "مرحبا بالعالم",
  "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก", "Ελληνικά", "\u{20000}\u{20001}", "\u{1D400}\u{1D401}",
  "\u{10330}\u{10331}", "\uE000", "\u{F0000}", "\u{10FFFF}", "\uFFFD", "\uFFFE", "\u0000", "\u007f",
  "a\u0000b", "\u0080\u009f", "<|endoftext|>", " <|endoftext|>", "<|endoftext|> ", "a<|endoftext|>b",
  "a <|endoftext|> b", "a  <|endoftext|>  b", "<|endoftext|><|endoftext|>", "<|endoftext|>\n<|endoftext|>",
  "<|endoftext|", "|endoftext|>", "<|endoftext|<|endoftext|>>", "<<|endoftext|>>", "<|EndOfText|>",
  "< |endoftext|>", "<|endoftext|>'s", "x\n\n<|endoftext|>\n\ny", "\u00a0<|endoftext|>\u00a0",
  "text with trailing spaces   ", "trailing\t\t", "trailing newline\n", "trailing\r\n", "  leading",
  "a" + " ".repeat(50) + "b", "-".repeat(300), "=".repeat(257), " ".repeat(1000), "\n".repeat(500),
  "a".repeat(1000), "ab".repeat(700), "xyz".repeat(400), "1".repeat(999), "\u00e9".repeat(300),
  "\u{1F600}".repeat(120), "\u0301".repeat(250), "Supercalifragilisticexpialidocious", "abc".repeat(40),
  "\u0085", "a\u0085b", "a\u0085\u0085b", " \u0085", "\uFEFF", "\uFEFFhello", "a\uFEFF\uFEFFb", "x \uFEFF y",
  "\u180e", "a\u180eb", "\u200b", "a\u200bb", "\u061c", "\u2060",
];
EDGES.forEach((t, i) => add(`edge:${i}`, t));

// 3. Special-token cases: the book's text joined by <|endoftext|>, as the
// book's GPTDatasetV1 inputs are, and a partial one at the very end.
const lines = sample.split("\n").filter((l) => l.length > 0);
add("special:joined", lines.slice(0, 4).join("<|endoftext|>"));
add("special:around", "<|endoftext|>" + lines[0] + "<|endoftext|>");
add("special:partial-end", lines[0] + "<|endoftext|");

// 4. Random texts from the fixed seed, most short, every tenth longer.
for (let i = 0; i < N_RANDOM; i++) add(`random:${i}`, randomText(1 + int(i % 10 === 0 ? 150 : 30)));
// and random texts around a U+0085 or U+FEFF (where JavaScript's \s is not tiktoken's).
for (let i = 0; i < 60; i++) {
  add(`random-ws:${i}`, randomText(1 + int(20)) + pick(["\u0085", "\uFEFF"]) + randomText(int(8)));
}

// 5. Every Unicode General_Category, in every block where it occurs
// (Blocks.txt; code points outside every block as one more): a category
// the tables get wrong for a single range of code points changes where
// the pattern cuts the text, and the ids then differ only where the cut
// meets a neighbour it would have joined (a contraction, punctuation, a
// letter run, a space). So each text starts with one before a contraction
// and mixes code points drawn from that
// category and block with ASCII words, contractions, digits, punctuation
// and spaces; CATEGORY_TEXTS texts per category and block, in mode "text".
// Surrogates (Cs) cannot be written in UTF-8; the unassigned (Cn) are those
// no Unicode version assigns (usable, above).
const CATEGORY_TEXTS = 6;
const BLOCKS = [];
for (const line of fs.readFileSync(path.join(path.dirname(UCD), "Blocks.txt"), "utf8").split("\n")) {
  const m = /^([0-9A-F]+)\.\.([0-9A-F]+); (.+)$/.exec(line.trim());
  if (m) BLOCKS.push([parseInt(m[1], 16), parseInt(m[2], 16), m[3]]);
}
const JS_LETTER = /^\p{L}$/u, JS_NUMBER = /^\p{N}$/u;
const sameClass = (cp) => {
  const c = String.fromCodePoint(cp), cat = category[cp];
  return JS_LETTER.test(c) === (cat[0] === "L") && JS_NUMBER.test(c) === (cat[0] === "N");
};
const blockOf = new Int32Array(0x110000).fill(-1);
BLOCKS.forEach(([lo, hi], i) => blockOf.fill(i, lo, hi + 1));
const groups = new Map();  // "category block" -> code points
for (let cp = 0; cp < 0x110000; cp++) {
  const cat = category[cp];
  if (cat === "Cs" || (cp >= 0xd800 && cp <= 0xdfff) || !usable(cp)) continue;
  if (!sameClass(cp)) {
    console.error(`tokenizer_cases.mjs: U+${cp.toString(16).toUpperCase().padStart(4, "0")}: expected node's letter and ` +
      `number classes to be UnicodeData.txt's (${cat}), found otherwise (node ${process.version}, ` +
      `Unicode ${process.versions.unicode}): the reference would be node's Unicode, not the tables'`);
    process.exit(1);
  }
  const key = `${cat} ${blockOf[cp] < 0 ? "No_Block" : BLOCKS[blockOf[cp]][2]}`;
  if (!groups.has(key)) groups.set(key, []);
  groups.get(key).push(cp);
}
const ASCII_PIECES = [() => " ", () => "  ", () => pick(["a", "the", "x", "I", "ok", "Hello"]),
  () => " " + pick(["a", "the", "x"]), () => pick(["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'"]),
  () => String(int(1000)), () => pick([".", ",", "!", "?", "-", "\"", "(", ")", ":", "_"]), () => "\n"];
const categoryRandom = rng(20240602);
for (const [key, cps] of groups) {
  const draw = () => String.fromCodePoint(cps[Math.floor(categoryRandom() * cps.length)]);
  for (let t = 0; t < CATEGORY_TEXTS; t++) {
    // one drawn code point before a contraction ("X's": a letter keeps
    // "'s" whole, "other" takes the apostrophe), then a random mix
    let text = draw() + ["'s", "'t", "'re", "'ll", "'d"][Math.floor(categoryRandom() * 5)];
    for (let i = 3 + Math.floor(categoryRandom() * 6); i > 0; i--) {
      if (categoryRandom() < 0.5) {
        for (let r = 1 + Math.floor(categoryRandom() * 3); r > 0; r--) text += draw();
      } else {
        text += ASCII_PIECES[Math.floor(categoryRandom() * ASCII_PIECES.length)]();
      }
    }
    add(`category:${key.replace(/ /g, "_")}:${t}`, text, ["text"]);
  }
}
stats.groups = groups.size;

fs.writeFileSync(outFile, Buffer.concat([
  Buffer.from("# tokenizer_cases.txt: GENERATED by tools/cases/tokenizer_cases.mjs; do not edit.\n" +
    `# Reference ids from npm js-tiktoken ${jsTiktokenVersion}, getEncoding("gpt2"); \\s as White_Space ` +
    "where a text has U+0085 or U+FEFF.\n" +
    "# C <mode> <nbytes> <label> / <text> / E <count> <ids...> or X <byte offset of the disallowed special>\n"),
  ...out,
]));
console.log(`${outFile}: ${stats.cases} cases (js-tiktoken ${jsTiktokenVersion}; ${stats.groups} categories x blocks); ${stats.ws} with U+0085 or ` +
  `U+FEFF, encoded with \\s as White_Space (stock js-tiktoken differs on ${stats.wsDiffers} of them)`);
