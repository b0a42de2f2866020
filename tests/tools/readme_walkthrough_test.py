#!/usr/bin/env python3
"""Runs a README section's shell examples and checks the output they show.

    readme_walkthrough_test.py README.md "SECTION HEADING" BIN_DIR

The ```-blocks of the section are run as one bash script (so that `cd` and
variables carry from one `$ ` line to the next), in a scratch HOME (the
README's /tmp/incident is replaced by a directory in it), with
BIN_DIR first on PATH and the README's directory as the working directory.
Each `$ COMMAND` line is followed in the README by the stdout it prints; each
shown line must appear in the command's real stdout, in order. A shown line
"..." stands for any lines; "…" inside a line for any text; a line ending
"; ..." must only start as shown. stderr is not compared (it is not shown).
Exit 0 when every shown line was found, 1 otherwise (each miss is printed).
"""
import os
import re
import subprocess
import sys
import tempfile


def section(text, heading):
    start = text.index(heading)
    rest = text[start + len(heading):]
    nxt = re.search(r"^#{1,3} ", rest, re.M)
    return rest[: nxt.start()] if nxt else rest


def blocks(sec):
    return re.findall(r"^```\n(.*?)^```$", sec, re.M | re.S)


def parse(block):
    cmds = []  # [(command, [shown lines])]
    for line in block.splitlines():
        if line.startswith("$ "):
            cmds.append((line[2:], []))
        elif cmds:
            cmds[-1][1].append(line)
    return cmds


def pattern(shown):
    if shown.endswith("; ..."):
        return re.compile(re.escape(shown[:-3]).replace("…", ".*") + ".*")
    return re.compile(re.escape(shown).replace("…", ".*"))


def main():
    readme, heading, bin_dir = sys.argv[1:4]
    text = open(readme, encoding="utf-8").read()
    failures = 0
    checked = 0
    env = dict(os.environ, PATH=os.path.abspath(bin_dir) + os.pathsep + os.environ["PATH"])
    with tempfile.TemporaryDirectory() as home:
        env["HOME"] = home
        # One script for the section: variables and `cd` carry across blocks.
        # The README's scratch directory /tmp/incident is replaced by a fresh
        # one, in the commands and in the output they show.
        scratch = os.path.join(home, "incident")
        sec = section(text, heading).replace("/tmp/incident", scratch)
        for block in ["\n".join(blocks(sec))]:
            cmds = parse(block)
            script = ["set +e"]
            for i, (cmd, _) in enumerate(cmds):
                script.append(f"echo '@@@ {i}'")
                script.append(f"{cmd} 2>/dev/null")
            out = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True,
                                 text=True, env=env, cwd=os.path.dirname(os.path.abspath(readme)))
            parts = re.split(r"^@@@ \d+\n", out.stdout, flags=re.M)[1:]
            if len(parts) != len(cmds):
                print(f"FAIL: the block stopped early:\n{out.stdout}\n{out.stderr}")
                failures += 1
                continue
            for (cmd, shown), got in zip(cmds, parts):
                lines = got.splitlines()
                at = 0
                for s in shown:
                    if s.strip() in ("...", ""):
                        continue
                    p = pattern(s)
                    while at < len(lines) and not p.fullmatch(lines[at]):
                        at += 1
                    checked += 1
                    if at == len(lines):
                        print(f"FAIL: `{cmd}` does not print (in order): {s}")
                        print("  | " + "\n  | ".join(got.splitlines()))
                        failures += 1
                        break
                    at += 1
    print(f"{checked} shown line(s) checked, {failures} failure(s)")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
