"""01 in Python: what this machine has, and why the rest is missing.

locus finds its backends at run time: the same wheel runs on a laptop with nothing
installed and on a GPU node. Every technology without a device says why.

    python python/examples/01_locations.py
"""

import locus


def main():
    print("Locations found on this machine:", ", ".join(locus.available()))
    print("\nPer technology:")
    for technology, entry in locus.info().items():
        if entry["locations"]:
            print(f"  {technology:<8} {', '.join(entry['locations'])}")
        else:
            print(f"  {technology:<8} none: {entry['missing']}")
        for skipped in entry["skipped"]:
            print(f"           skipped: {skipped}")
    print("\nA bad location name explains itself:")
    try:
        locus.Buffer("gpu:0", 1)
    except ValueError as e:
        print(f"  {e}")


if __name__ == "__main__":
    main()
