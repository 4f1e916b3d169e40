"""One pass over a list of paths through an HTTP/1.1 server, over keep-alive connections.

    python3 serve_pass.py PORT CONNECTIONS PATHS_FILE

Each of CONNECTIONS connections takes the next path from the list (PATHS_FILE: one path a line)
until none is left, reads each response whole (Content-Length or chunked), opens a new connection
after a response with `Connection: close`, and fails on any status but 200. Prints the pass's
wall-clock seconds. Used by run-serve.sh (the warm pass: every object a miss) and serve-miss-cpu.sh.
"""
import asyncio
import sys
import time


async def worker(port, queue):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    while queue:
        path = queue.pop()
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        if lines[0].split()[1] != "200":
            raise SystemExit(f"{path}: {lines[0]}")
        fields = [l.split(":", 1) for l in lines[1:] if ":" in l]
        length = next((int(v) for n, v in fields if n.strip().lower() == "content-length"), None)
        if length is not None:
            await reader.readexactly(length)
        else:
            while True:  # chunked
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                await reader.readexactly(size + 2)
                if size == 0:
                    break
        # A server that ends the connection after this response (nginx does after
        # keepalive_requests, 1000 by default) says so: the next path goes on a new one.
        if any(n.strip().lower() == "connection" and "close" in v.lower() for n, v in fields):
            writer.close()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.close()


async def main():
    port, connections = int(sys.argv[1]), int(sys.argv[2])
    with open(sys.argv[3]) as f:
        names = f.read().split()
    queue = list(reversed(names))
    start = time.monotonic()
    await asyncio.gather(*(worker(port, queue) for _ in range(connections)))
    print(f"{time.monotonic() - start:.3f}")


asyncio.run(main())
