"""Write the file the browser test opens: groups /data and /notes, a 1-D
(/data/line), a 2-D (/data/image) and a 3-D (/data/stack) dataset.

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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
