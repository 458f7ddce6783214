# SPDX-License-Identifier: BSD-3-Clause
"""prof's Python API. Everything here is a no-op unless the program runs under
`python3 -m prof script.py` (or `prof-run python3 -m prof ...`), so code can keep it in place:

    import prof

    with prof.region("step"):          # a region of its own, around any code
        train_step()

    @prof.region("load")               # a function's calls as a region of that name
    def load(): ...

    prof.recording(False)              # stop recording (OTF2 MeasurementOnOff) ...
    warm_up()
    prof.recording(True)               # ... and go on

Every Python function is a region already (module:qualname, with its file and first line);
prof.region names phases across functions.
"""
import functools as _functools

__all__ = ["region", "recording", "measuring"]

_impl = None  # prof._prof once `python3 -m prof` started the measurement


def measuring():
    """Whether this interpreter is being measured by prof."""
    return _impl is not None


class region:
    """`with prof.region(name):` or `@prof.region(name)` (`@prof.region` names it after the function)."""

    def __init__(self, name):
        if callable(name):  # @prof.region without a name
            self._name = "%s:%s" % (name.__module__, name.__qualname__)
            self._fn = name
            _functools.update_wrapper(self, name)
        else:
            self._name = str(name)
            self._fn = None

    def __enter__(self):
        if _impl is not None:
            _impl.region_begin(self._name)
        return self

    def __exit__(self, *exc):
        if _impl is not None:
            _impl.region_end(self._name)
        return False

    def __call__(self, *args, **kwargs):
        if self._fn is not None:  # the decorated function itself
            with self:
                return self._fn(*args, **kwargs)
        fn = args[0]  # @prof.region("name") applied to fn

        @_functools.wraps(fn)
        def wrapped(*a, **k):
            with region(self._name):
                return fn(*a, **k)

        return wrapped


def recording(on):
    """Turn recording off (False) or on again (True); OTF2 MeasurementOnOff records mark the gap."""
    if _impl is not None:
        _impl.set_recording(bool(on))


def _activate(impl):
    global _impl
    _impl = impl
