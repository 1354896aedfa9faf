"""Write the file the browser test opens: groups /data and /notes, a 1-D
(/data/line), a 2-D (/data/image) and a 3-D (/data/stack) dataset, and a
10 GiB 3-D one (/data/big: 2560 pictures of 1024 x 1024 float32 in chunks
of 256 x 256, lz4; it compresses to about 45 MiB and takes seconds to
write) whose view must read only the chunks it shows.

    python browser-test-file.py OUT.arca
"""

import sys

import numpy as np

import arca


def main(out):
    x = np.linspace(0, 4 * np.pi, 500)
    yy, xx = np.mgrid[0:120, 0:160]
    with arca.File(out, "w") as f:
        f["data/line"] = np.sin(x) * np.exp(-x / 8)
        f["data/image"] = np.sin(xx / 9.0) * np.cos(yy / 7.0) + yy / 120.0
        # Each slice along the first axis is a different picture.
        f.create_dataset("data/stack", data=np.stack([np.sin(xx / (4.0 + 3 * k)) * (k + 1) + yy / 60.0
                                                      for k in range(4)]).astype("f4"),
                         chunks=(1, 60, 80))
        f.create_group("notes").attrs["text"] = "written for the browser test"
        # Every chunk written (none left to the fill value), so a view that
        # read more than it shows would be seen in the server's io counts.
        n, side = 2560, 1024
        big = f.create_dataset("data/big", shape=(n, side, side), dtype="f4",
                               chunks=(1, 256, 256), compression="lz4")
        # Steps down the rows and across the columns, in a ratio that
        # changes from one picture to the next (so each looks different).
        rows = (np.arange(side, dtype="f4") // 64)[:, None]
        cols = (np.arange(side, dtype="f4") // 32)[None, :]
        block = np.empty((16, side, side), "f4")
        for k in range(0, n, len(block)):
            for j in range(len(block)):
                np.add(rows * ((k + j) % 4 + 1), cols, out=block[j])
            big[k:k + len(block)] = block
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
