"""`tablectl software-id`: the release digest, the locked dependencies (and whether what is
installed is what the lock pins), the driver plugins, per-file hashes, and a verifier's seeded
HMAC."""
from __future__ import annotations

import argparse
import json

from controller import __version__
from controller.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("software-id", help="SHA-256 of this release, of its locked "
                       "dependencies and of both (what [software] approved lists), and a seeded "
                       "HMAC for on-demand authentication",
                       description="The software's identity for a regulator or the floor: the "
                       "SHA-256 of this release's files, of its installed dependencies, and of "
                       "both together (the digest each shoe's start records and [software] "
                       "approved lists); --files lists every file's own; --hmac-seed answers a "
                       "verifier's challenge with HMAC-SHA256(seed, release).")
    p.add_argument("--files", action="store_true", help="also list every file's SHA-256")
    p.add_argument("--hmac-seed", metavar="HEX",
                   help="the verifier's seed (hex): print HMAC-SHA256(seed, release)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.release import software
    out: dict = {"version": __version__, **software.identity(),
                 "files": len(software.release_files())}
    if args.hmac_seed is not None:
        try:
            seed = bytes.fromhex(args.hmac_seed)
        except ValueError:
            raise InputError(f"--hmac-seed {args.hmac_seed!r}: not hexadecimal") from None
        if not seed:
            raise InputError("--hmac-seed: give at least one byte of seed")
        out["hmac_sha256"] = software.seeded_hmac(seed)
    if args.files:
        out["file_sha256"] = software.file_digests()
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"tablectl {out['version']}: {out['files']} files, {out['locked']} locked "
          f"dependencies, installed {out['dependencies']}")
    print(f"release SHA-256       {out['release_sha256']}")
    print(f"dependencies SHA-256  {out['dependencies_sha256']}")
    if out.get("plugins"):
        print(f"plugins SHA-256       {out['plugins_sha256']}  ({', '.join(out['plugins'])})")
    print(f"software SHA-256      {out['software_sha256']}  (release and dependencies: the one "
          f"to approve)")
    if "hmac_sha256" in out:
        print(f"HMAC-SHA256           {out['hmac_sha256']}  (seed {args.hmac_seed})")
    for path, digest in out.get("file_sha256", {}).items():
        print(f"{digest}  {path}")
    return 0
