# SPDX-License-Identifier: BSD-3-Clause
# asyncio: coroutines suspended and resumed across each other, so frames interleave; each resume
# is a call and each suspension a return, so the trace must still nest.
import asyncio

resumed = 0


async def tick(name, n):
    for i in range(n):
        await asyncio.sleep(0)
    return n


async def main():
    results = await asyncio.gather(*(tick("t%d" % i, 5) for i in range(4)))
    print("gathered", sum(results))


asyncio.run(main())
