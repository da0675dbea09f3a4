"""Forward-mode sensitivities of an ODE solution with ``kenaz.jvp``: aiming a cannon with air drag.

Run: ``python examples/projectile_ode.py``.

A projectile with quadratic air drag obeys

    x' = vx,   y' = vy,   vx' = -k |v| vx,   vy' = -g - k |v| vy,

which has no closed-form solution. We integrate it with a classic Runge-Kutta
(RK4) loop written in plain Python with ``kenaz.numpy``, stop when the
projectile falls through the ground (a data-dependent ``while`` loop), and
interpolate the landing point. ``kenaz.jvp`` pushes a tangent through that
whole simulation in one forward pass and gives d(range)/d(angle), exact to
rounding, where finite differences trade truncation against cancellation
error. Newton's method with that derivative then finds the launch angle that
hits a target (the "shooting method").
"""

from __future__ import annotations

import math
import time

import kenaz
import kenaz.numpy as knp

GRAVITY = 9.81  # m/s^2
DRAG = 0.02  # 1/m: drag acceleration is DRAG * |v|^2
SPEED = 50.0  # m/s
DT = 0.01  # s


def derivative(state: tuple) -> tuple:
    """Time derivative of ``(x, y, vx, vy)``."""
    _, _, vx, vy = state
    speed = knp.sqrt(vx * vx + vy * vy)
    return vx, vy, -DRAG * speed * vx, -GRAVITY - DRAG * speed * vy


def rk4_step(state: tuple, dt: float) -> tuple:
    """One classic fourth-order Runge-Kutta step."""

    def shifted(base: tuple, slope: tuple, h: float) -> tuple:
        return tuple(b + h * s for b, s in zip(base, slope, strict=True))

    k1 = derivative(state)
    k2 = derivative(shifted(state, k1, dt / 2))
    k3 = derivative(shifted(state, k2, dt / 2))
    k4 = derivative(shifted(state, k3, dt))
    return tuple(
        s + dt / 6 * (a + 2 * b + 2 * c + d)
        for s, a, b, c, d in zip(state, k1, k2, k3, k4, strict=True)
    )


def landing_distance(angle: kenaz.Tensor, speed: float = SPEED) -> kenaz.Tensor:
    """Horizontal distance where a shot at ``angle`` (radians) comes back to the ground."""
    state = (knp.asarray(0.0), knp.asarray(0.0), speed * knp.cos(angle), speed * knp.sin(angle))
    previous = state
    while state[1] >= 0.0:  # ordinary Python control flow on concrete values (a bool)
        previous, state = state, rk4_step(state, DT)
    # Linear interpolation between the last two steps for the point where y = 0.
    fraction = previous[1] / (previous[1] - state[1])
    return previous[0] + fraction * (state[0] - previous[0])


def aim(target: float, angle: float = 0.3, steps: int = 10) -> float:
    """Newton's method on ``landing_distance(angle) = target``, derivatives from ``jvp``."""
    for iteration in range(steps):
        distance, slope = kenaz.jvp(landing_distance, (knp.asarray(angle),), (knp.asarray(1.0),))
        miss = float(distance) - target
        print(
            f"  iteration {iteration}: angle {math.degrees(angle):7.3f} deg, "
            f"lands at {float(distance):8.3f} m (miss {miss:+.2e} m)"
        )
        if abs(miss) < 1e-9:
            break
        angle -= miss / float(slope)
    return angle


def main() -> None:
    started = time.perf_counter()
    angle = knp.asarray(math.radians(30.0))
    distance, slope = kenaz.jvp(landing_distance, (angle,), (knp.asarray(1.0),))
    print(f"A {SPEED:.0f} m/s shot at 30 degrees with drag lands at {float(distance):.3f} m")
    print(f"d(range)/d(angle) by jvp:                     {float(slope):.8f} m/rad")
    for h in (1e-2, 1e-4, 1e-6, 1e-9):
        central = (float(landing_distance(angle + h)) - float(landing_distance(angle - h))) / (
            2 * h
        )
        print(f"  central finite difference, step {h:.0e}:      {central:.8f} m/rad")
    _, speed_slope = kenaz.jvp(lambda s: landing_distance(angle, s), (knp.asarray(SPEED),), (1.0,))
    print(f"d(range)/d(speed) by jvp:                     {float(speed_slope):.8f} s")
    print("\nAiming at a target 60 m away with Newton's method (derivatives from jvp):")
    best = aim(60.0)
    print(f"Launch at {math.degrees(best):.6f} degrees")
    print(f"wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
