"""Who acts: one type for every door a change comes through.

A change is made by an API key (a till, an integration), a staff member signed in to
the back office (its pages and its JSON API), a paired register (a key that is the
credential of one device), or the system itself (the command line, a payment
terminal's callback, the demo). The services take the actor from here for what
they write about the person (``created_by``, ``closed_by``) and for the audit trail
(``audit.service.record``), so the same change leaves the same record whatever the
door; only the door's own code knows how the actor was established. As polar's
``AuthSubject``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ActorKind = Literal["key", "staff", "register", "system"]


@dataclass(frozen=True, slots=True)
class Actor:
    """The one acting. ``user_id`` is the staff member the change is written as
    (a key's and a register's owner, the staff member signed in; for the system,
    the staff member it acts for when there is one, else None); ``key_id`` and
    ``register_id`` name the credential when there is one."""

    kind: ActorKind
    user_id: int | None
    name: str = ""
    key_id: int | None = None
    register_id: int | None = None

    @classmethod
    def key(cls, key_id: int, user_id: int, name: str = "") -> Actor:
        return cls("key", user_id, name, key_id=key_id)

    @classmethod
    def register(cls, register_id: int, key_id: int, user_id: int, name: str = "") -> Actor:
        return cls("register", user_id, name, key_id=key_id, register_id=register_id)

    @classmethod
    def staff(cls, user_id: int, name: str = "") -> Actor:
        return cls("staff", user_id, name)

    @classmethod
    def system(cls, name: str = "system", user_id: int | None = None) -> Actor:
        """The command line, a terminal's callback, the demo: no credential; a
        staff member to write the change as when it acts for one."""
        return cls("system", user_id, name)


# The command line: an operator on the server, no staff member (the audit trail's
# ``user`` is then null, as it always was for the CLI).
COMMAND_LINE = Actor.system("command line")
