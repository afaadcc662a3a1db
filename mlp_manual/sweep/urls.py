"""The URL of a study's database: checked as SQLAlchemy reads it, and shown without its
password in files and messages."""

from urllib.parse import urlsplit

from ..errors import ConfigError, one_line

DATABASE_SCHEMES = ("postgresql", "mysql", "sqlite")
ALIASES = {"postgres": "postgresql"}


def without_password(url: str) -> str:
    """``url`` with any password removed (after ``user:`` and as a ``password=`` parameter), for
    files and messages (the driver then reads it from ~/.pgpass or PGPASSWORD). Any text is
    taken, a malformed URL included: it is what messages about such a URL show, on one line
    (a control character is written as its escape, ``\\n``)."""
    text = one_line(url)
    head, sep, rest = text.partition("://")
    if not sep:
        return text
    at = rest.rfind("@")  # a password may hold "@" or "/" unescaped: the user part ends at the last "@"
    if at >= 0:
        user = rest[:at].partition(":")[0]
        rest = (f"{user}@" if user else "") + rest[at + 1:]
    rest, question, query = rest.partition("?")
    if question:
        kept = [p for p in query.split("&") if p.partition("=")[0].strip().lower() != "password"]
        rest += "?" + "&".join(kept) if kept else ""
    return head + sep + rest


def database_url(url: str) -> str:
    """The database URL ``url`` checked, as SQLAlchemy reads it: ``postgres://`` (what hosting
    providers hand out) is ``postgresql://``, ``postgres+psycopg://`` ``postgresql+psycopg://``.
    ConfigError in one line for a scheme that is not a database's, a host with an unclosed
    ``[``, a port that is not a number from 1 to 65535, or a SQLite URL without its file."""
    shown = f"storage {without_password(url)}"
    if not url.isprintable():
        raise ConfigError(f"{shown}: a URL holds no line breaks or other control characters")
    head, _, rest = url.partition("://")
    name, plus, driver = head.partition("+")
    kind = ALIASES.get(name.lower(), name.lower())
    if kind not in DATABASE_SCHEMES:
        raise ConfigError(f"{shown}: use a postgresql://, mysql:// or sqlite:/// URL, or the path of a journal file")
    url = f"{kind}{plus}{driver}://{rest}"
    if kind == "sqlite":
        if not rest.startswith("/") or not rest.strip("/"):
            raise ConfigError(f"{shown}: a SQLite URL is sqlite:///FILE (three slashes, then the file's path)")
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed [ of an IPv6 address
        raise ConfigError(f"{shown}: the host is not valid (an IPv6 address is written in brackets: [::1])") from None
    try:
        port = parts.port
    except ValueError:  # not a number, two ports, out of range
        port = 0
    if port == 0:
        raise ConfigError(f"{shown}: the port must be a number from 1 to 65535")
    return url


def scheme(url: str) -> str:
    """``postgresql`` of ``postgresql+psycopg://...``."""
    return url.partition(":")[0].partition("+")[0].lower()
