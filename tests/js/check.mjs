// Checks for the generated Markdown, driven by tests/test_markdown_math.py.
//
// Reads one JSON object on stdin:
//   {"math": [{"tex": "...", "display": true}, ...],   KaTeX, throwOnError + strict
//    "mermaid": ["pie ...", ...],                       @mermaid-js/parser parse("pie", text)
//    "markdown": ["# a title", ...]}                    markdown-it (CommonMark) to HTML
// and writes {"math": [null | "error"], "mermaid": [{"error": ..., "sections": [[label, value]], "title": ...}],
//             "markdown": ["<h1>…</h1>"]} on stdout.
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

process.stdout.write(JSON.stringify({ math, mermaid, markdown }));
