"""Shared by the scripts that run under mpirun."""

import sys


def abort_on_error(comm):
    """Take every rank down when one raises.

    A rank that fails while the others wait in a collective would otherwise
    hang the job until the test's timeout; this prints the error and calls
    ``MPI_Abort`` so mpirun exits at once with a failing status.
    """

    def hook(kind, value, tb):
        sys.__excepthook__(kind, value, tb)
        sys.stderr.flush()
        comm.Abort(1)

    sys.excepthook = hook
