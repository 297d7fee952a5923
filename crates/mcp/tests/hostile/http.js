// A hostile MCP server over streamable HTTP, for the tests of the client. Plain node.
//
//   node http.js MODE
//
// It listens on a free port of 127.0.0.1 and prints it on the first line of its stdout.
// MODE  ok: tools `echo` and `big` (answers, as one server-sent event, `n` bytes of text)
//       500: every request is answered HTTP 500 with a text body

const http = require("http");

const mode = process.argv[2] || "ok";
const tools = [
  { name: "echo", description: "Echoes.", inputSchema: { type: "object", properties: {} } },
  { name: "big", description: "Answers `n` bytes.", inputSchema: { type: "object", properties: { n: { type: "number" } } } },
];

function answer(res, msg) {
  res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
  res.end(JSON.stringify(msg));
}

function bigEvent(res, id, n) {
  res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "s1" });
  res.write(`data: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`);
  const piece = "x".repeat(1 << 20);
  let left = n;
  const more = () => {
    while (left > 0) {
      const ok = res.write(piece.slice(0, Math.min(left, piece.length)));
      left -= piece.length;
      if (!ok) return res.once("drain", more);
    }
    res.end(`"}]}}\n\n`);
  };
  res.on("error", () => {});
  more();
}

const server = http.createServer((req, res) => {
  if (mode === "500") {
    res.writeHead(500, { "content-type": "text/plain" });
    return res.end("internal trouble");
  }
  if (req.method === "GET") {
    res.writeHead(405);
    return res.end();
  }
  if (req.method === "DELETE") {
    res.writeHead(200);
    return res.end();
  }
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const msg = JSON.parse(body);
    if (msg.id === undefined) {
      res.writeHead(202);
      return res.end();
    }
    const { id, method, params } = msg;
    if (method === "initialize") {
      return answer(res, {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "hostile-http", version: "1" },
        },
      });
    }
    if (method === "tools/list") return answer(res, { jsonrpc: "2.0", id, result: { tools } });
    if (method === "tools/call" && params.name === "big") return bigEvent(res, id, Number(params.arguments.n));
    if (method === "tools/call") {
      return answer(res, { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "echo" }] } });
    }
    return answer(res, { jsonrpc: "2.0", id, error: { code: -32601, message: "no such method" } });
  });
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
