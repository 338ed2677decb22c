// Checks for the generated Markdown, driven by tests/test_markdown_math.py.
//
// Reads one JSON object on stdin:
//   {"math": [{"tex": "...", "display": true}, ...],   KaTeX, throwOnError + strict
//    "mermaid": ["pie ...", ...],                       @mermaid-js/parser parse("pie", text)
//    "markdown": ["# a title", ...],                   markdown-it (CommonMark) to HTML
//    "page": ["| $x$ | a |", ...]}                     the same with its $…$ and $$…$$ set by KaTeX, as GitHub shows it
// and writes {"math": [null | "error"], "mermaid": [{"error": ..., "sections": [[label, value]], "title": ...}],
//             "markdown": ["<h1>…</h1>"], "page": ["<table>…</table>"]} on stdout.
import katex from "katex";
import MarkdownIt from "markdown-it";
import { parse } from "@mermaid-js/parser";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const math = (input.math || []).map(({ tex, display }) => {
  try {
    katex.renderToString(tex, { displayMode: !!display, throwOnError: true, strict: "error" });
    return null;
  } catch (e) {
    return String(e.message || e);
  }
});

const mermaid = [];
for (const text of input.mermaid || []) {
  try {
    const ast = await parse("pie", text);
    mermaid.push({
      error: null,
      title: ast.title ?? null,
      showData: !!ast.showData,
      sections: (ast.sections || []).map((s) => [s.label, s.value]),
    });
  } catch (e) {
    mermaid.push({ error: String(e.message || e), sections: [] });
  }
}

const md = new MarkdownIt();
const markdown = (input.markdown || []).map((src) => md.render(src));

// math first (a formula's _ or * is not Markdown), each put back after markdown-it ran
const page = (input.page || []).map((src) => {
  const set = [];
  const keep = (tex, display) => {
    set.push(katex.renderToString(tex, { displayMode: display, throwOnError: false }));
    return `KATEXSPAN${set.length - 1}END`;
  };
  const text = src.replace(/\$\$([\s\S]+?)\$\$/g, (_, t) => keep(t, true))
    .replace(/(?<!\\)\$([^$\n]+?)(?<!\\)\$/g, (_, t) => keep(t, false));
  return md.render(text).replace(/KATEXSPAN(\d+)END/g, (_, i) => set[+i]);
});

process.stdout.write(JSON.stringify({ math, mermaid, markdown, page }));
