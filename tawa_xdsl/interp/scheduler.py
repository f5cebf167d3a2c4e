"""Roles as coroutines: a seeded scheduler that interleaves warp-specialized roles.

Each role runs on its own Python thread, but only one runs at a time. A role runs
until it reaches a synchronisation point (`sync`), where it states when it may go
on; the scheduler then picks, with its seeded random generator, one role that may
go on. Different seeds explore different interleavings; the same seed replays the
same one. When no unfinished role may go on, that is a deadlock, reported with
what every role is waiting for.

The simulators of the aref level and of the mbarrier level are built on this.
"""

from __future__ import annotations

import dataclasses
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.interpreter import Interpreter
from xdsl.ir import Region
from xdsl.utils.scoped_dict import ScopedDict


def role_body(interpreter: Interpreter, region: Region) -> Callable[[], None]:
    """What a role's thread runs: `region` in a scope of its own, so each role
    sees the values defined before the role op and nothing of the other roles."""

    def body() -> None:
        scope = ScopedDict(parent=interpreter._ctx, name="role")
        dataclasses.replace(interpreter, _ctx=scope).run_ssacfg_region(region, ())

    return body


class SimulationError(Exception):
    """The simulated program broke its synchronisation protocol."""


class Deadlock(SimulationError):
    """No role can make progress."""


class _Abort(BaseException):
    """Unwinds a role thread when the simulation stops early."""


@dataclass(eq=False)
class _Role:
    name: str
    body: Callable[[], None]
    turn: threading.Event = field(default_factory=threading.Event)
    ready: Callable[[], bool] | None = None
    waiting: Callable[[], str] = lambda: "nothing"
    done: bool = False
    error: BaseException | None = None


class RoleScheduler:
    """Interleaves roles at their sync points, choosing with a seeded generator."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self._local = threading.local()
        self._back = threading.Event()
        self._aborted = False
        self._done_names: set[str] = set()

    def sync(self, ready: Callable[[], bool], waiting: Callable[[], str]) -> None:
        """Called by a role: hand control back; resume once `ready()` holds and the
        scheduler picks this role. `waiting()` describes the wait for diagnostics."""
        role: _Role = self._local.role
        role.ready, role.waiting = ready, waiting
        self._switch_out(role)

    def run(self, roles: dict[str, Callable[[], None]]) -> None:
        """Run every role to completion; raise `Deadlock` or a role's own error.
        Called from inside a role, the new roles join the running ones (a thread
        block of a cluster starting its warpgroups) and the caller waits until
        they have finished."""
        if self.current() is not None:
            added = self._add(roles)
            self.sync(
                lambda: all(r.done for r in added),
                lambda: f"the end of {', '.join(r.name for r in added)}",
            )
            return
        self._aborted = False
        self._done_names = set()
        self._state: list[_Role] = []
        self._threads: list[threading.Thread] = []
        self._add(roles)
        state = self._state
        try:
            while live := [r for r in state if not r.done]:
                runnable = [r for r in live if r.ready is None or r.ready()]
                if not runnable:
                    details = "; ".join(
                        f"{r.name} waits at {r.waiting()}" for r in live
                    )
                    raise Deadlock(f"deadlock: {details}")
                chosen = self.rng.choice(runnable)
                chosen.ready = None
                self._back.clear()
                chosen.turn.set()
                self._back.wait()
                if chosen.error is not None:
                    raise chosen.error
        finally:
            self._aborted = True
            for r in state:
                r.turn.set()
            for t in self._threads:
                t.join()

    def _add(self, roles: dict[str, Callable[[], None]]) -> list[_Role]:
        added = [_Role(name, body) for name, body in roles.items()]
        for r in added:
            thread = threading.Thread(target=self._role_main, args=(r,), daemon=True)
            self._state.append(r)
            self._threads.append(thread)
            thread.start()
        return added

    def current(self) -> str | None:
        """The name of the role running now (None outside the roles)."""
        role = getattr(self._local, "role", None)
        return role.name if role is not None else None

    def finished(self, name: str) -> bool:
        """Whether the role called `name` has run to its end (for diagnostics)."""
        return name in self._done_names

    def _role_main(self, role: _Role) -> None:
        self._local.role = role
        role.turn.wait()
        role.turn.clear()
        try:
            if not self._aborted:
                role.body()
        except _Abort:
            pass
        except BaseException as e:  # reported by `run` in the scheduling thread
            role.error = e
        finally:
            role.done = True
            self._done_names.add(role.name)
            self._back.set()

    def _switch_out(self, role: _Role) -> None:
        self._back.set()
        role.turn.wait()
        role.turn.clear()
        if self._aborted:
            raise _Abort
