"""Errors the user can cause: one line with file:line and a hint; the CLI prints them and exits 2."""


class PorterError(Exception):
    """A problem with porter's input. `str()` is the one line the CLI prints."""

    def __init__(self, message, path=None, line=None, column=None, hint=None):
        super().__init__(message)
        self.message, self.path, self.line, self.column, self.hint = message, path, line, column, hint

    def __str__(self):
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        hint = f" (hint: {self.hint})" if self.hint else ""
        return f"{where}{self.message}{hint}"


class SourceError(PorterError):
    """The model source cannot be read or parsed, or holds no model."""


class UsageError(PorterError):
    """Bad command-line arguments (flags, JSON, shapes)."""


class WeightsError(PorterError):
    """A weights file cannot be read safely or does not fit the model."""


class OutputError(PorterError):
    """The output directory cannot be written, or writing it would lose files porter does not own."""


class InternalError(PorterError):
    """porter produced output that fails its own check (a porter bug): the CLI prints it and exits 3."""
