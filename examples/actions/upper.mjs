// Program action (bidi): upper-cases each input chunk as it arrives.
//
// stdin: one JSON line per input chunk, a string or {"text": "..."};
// end of stdin = end of input. stdout: {"chunk": {"upper": "..."}} per
// input, then {"result": {"lines": N}}.
import { createInterface } from "node:readline";

const write = (message) => process.stdout.write(JSON.stringify(message) + "\n");

let lines = 0;
const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  if (line.trim() === "") return;
  const chunk = JSON.parse(line);
  const text = typeof chunk === "string" ? chunk : String(chunk?.text ?? "");
  lines += 1;
  write({ chunk: { upper: text.toUpperCase() } });
});
// Exit only once stdout is flushed: process.exit() could drop the result.
input.on("close", () => write({ result: { lines } }));
