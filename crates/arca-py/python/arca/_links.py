"""Link objects, as h5py spells them: assign one to a group member to make
a link, or ask ``group.get(name, getlink=True)`` what a name is::

    f["latest"] = arca.SoftLink("/runs/42")
    f["calib"] = arca.ExternalLink("calib.arca", "/v3")
    f["alias"] = f["runs/42"]            # a second hard link
    f.get("latest", getlink=True)        # <SoftLink to "/runs/42">
"""


class HardLink:
    """A hard link: a name of an object in the same file."""

    def __repr__(self):
        return "<HardLink>"


class SoftLink:
    """A link to a path, followed when used; it may dangle."""

    def __init__(self, path):
        self._path = str(path)

    @property
    def path(self):
        """The path the link leads to."""
        return self._path

    def __repr__(self):
        return f'<SoftLink to "{self.path}">'

    def __eq__(self, other):
        return isinstance(other, SoftLink) and other.path == self.path

    def __hash__(self):
        return hash(("soft", self.path))


class ExternalLink:
    """A link to a path in another file (named relative to this file's
    directory, or absolute); objects reached through it are read-only."""

    def __init__(self, filename, path):
        self._filename = str(filename)
        self._path = str(path)

    @property
    def filename(self):
        """The other file."""
        return self._filename

    @property
    def path(self):
        """The path inside it."""
        return self._path

    def __repr__(self):
        return f'<ExternalLink to "{self.path}" in file "{self.filename}"'

    def __eq__(self, other):
        return (
            isinstance(other, ExternalLink)
            and other.path == self.path
            and other.filename == self.filename
        )

    def __hash__(self):
        return hash(("external", self.filename, self.path))


def from_native(t):
    """A link object from the native ``("hard", kind)`` / ``("soft",
    target)`` / ``("external", file, target)`` tuple."""
    if t[0] == "soft":
        return SoftLink(t[1])
    if t[0] == "external":
        return ExternalLink(t[1], t[2])
    return HardLink()
