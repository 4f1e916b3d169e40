"""One pass over a list of paths through an HTTP/1.1 server, over keep-alive connections.

    python3 serve_pass.py PORT CONNECTIONS PATHS_FILE

Each of CONNECTIONS connections takes the next path from the list (PATHS_FILE: one path a line)
until none is left, reads each response whole (Content-Length or chunked), and fails on any status
but 200. Prints the pass's wall-clock seconds. Used by run-serve.sh (the warm pass: every object a
miss) and serve-miss-cpu.sh.
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
        length = next((int(l.split(":", 1)[1]) for l in lines if l.lower().startswith("content-length:")), None)
        if length is not None:
            await reader.readexactly(length)
            continue
        while True:  # chunked
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
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
