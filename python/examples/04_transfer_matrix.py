"""04 in Python: the transfer matrix: a route for every ordered pair, with its reason.
Line by line `examples/04_transfer_matrix.rs`.

    python python/examples/04_transfer_matrix.py
"""

import locus


def main():
    locations = locus.available()
    print("How data at the left reaches code at the right:")
    for src in locations:
        for dst in locations:
            r = locus.route(src, dst)
            print(f"  {src} -> {dst}: {r['kind']} ({r['reason']})")
    # Copies follow the planner; a route can also be forced, e.g. to compare.
    a = locus.Memory(locations[-1] if locations else "host", 1 << 20)
    b = locus.Memory("host", 1 << 20)
    a.set(7)
    print(f"\ncopy_to:           {a.copy_to(b, 1 << 20)}")
    print(f"copy_to_via staged: {a.copy_to(b, 1 << 20, via='staged')}")
    assert b.read() == bytes([7]) * (1 << 20)
    print("\nCopy paths the backends registered:")
    for s, d, name in locus.registered_paths():
        print(f"  {s} -> {d}: {name}")
    print(f"process-wide counters: {locus.transfer_totals_text()}")


if __name__ == "__main__":
    main()
