"""Run-time layer: discrete-event simulators and real executors.

:mod:`dse.sim.core` is the one small discrete-event core (event queue,
trace, energy accounting with idle power) that the scenario simulators share.
"""
