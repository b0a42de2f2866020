#!/usr/bin/env python3
# Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
#
# Checks `flinkstate dump --json` against its JSON Schema and, for the JDK
# conformance streams, against what ObjectInputStream read (Conformance.java
# writes DIR/<case>.values.txt with a Recorder ObjectInputStream).
#
#   check_dump_json.py schema FLINKSTATE SCHEMA FILE...   validate only
#   check_dump_json.py values FLINKSTATE SCHEMA DIR       validate + compare
#
# Record format (one line per object the JDK resolves, in its order: strings
# when read, objects and arrays when complete; see Conformance.record):
#   string "<text, \uXXXX per UTF-16 unit outside printable ASCII>"
#   object <class> <field>=<type>:<value> ...   primitive fields, super first
#   array <class> [<type>:<value> ...]          primitive elements
#   enum <class> <NAME>
#   aborted <exception class>                   a WriteAbortedException
# Floats and doubles are compared by their raw bits.

import json
import math
import struct
import subprocess
import sys

import jsonschema

PRIM_NAMES = {'B': 'byte', 'S': 'short', 'I': 'int', 'J': 'long', 'Z': 'boolean',
              'C': 'char', 'F': 'float', 'D': 'double'}


def load_json(text):
    # Numbers with a fraction or exponent stay text, so bits can be checked.
    return json.loads(text, parse_float=lambda t: ('num', t))


def esc(s):
    units = s.encode('utf-16-be', 'surrogatepass')
    out = []
    for i in range(0, len(units), 2):
        u = (units[i] << 8) | units[i + 1]
        if 0x20 <= u < 0x7F and u not in (0x22, 0x5C):
            out.append(chr(u))
        else:
            out.append('\\u%04X' % u)
    return ''.join(out)


def nonfinite_bits(v, single):
    named = {'NaN': (0x7fc00000, 0x7ff8000000000000),
             'Infinity': (0x7f800000, 0x7ff0000000000000),
             '-Infinity': (0xff800000, 0xfff0000000000000)}
    if v in named:
        return named[v][0 if single else 1]
    if v.startswith('NaN(0x') and v.endswith(')'):
        return int(v[6:-1], 16)
    raise ValueError('bad non-finite form %r' % (v,))


def prim(t, v):
    name = PRIM_NAMES[t]
    if t in 'BSI':
        assert isinstance(v, int) and not isinstance(v, bool), (t, v)
        return '%s:%d' % (name, v)
    if t == 'J':
        if isinstance(v, str):
            n = int(v)
            assert abs(n) > 2 ** 53, 'long %s within 2^53 written as a string' % v
        else:
            assert isinstance(v, int) and not isinstance(v, bool), v
            n = v
            assert abs(n) <= 2 ** 53, 'long %d beyond 2^53 written as a number' % n
        return 'long:%d' % n
    if t == 'Z':
        assert isinstance(v, bool), v
        return 'boolean:%s' % ('true' if v else 'false')
    if t == 'C':
        assert isinstance(v, str) and len(v) == 1, v
        return 'char:0x%04X' % ord(v)
    single = t == 'F'
    if isinstance(v, tuple):
        x = float(v[1])
        assert math.isfinite(x), v
        bits = struct.unpack('>I', struct.pack('>f', x))[0] if single else \
            struct.unpack('>Q', struct.pack('>d', x))[0]
    else:
        assert isinstance(v, str), 'float as %r' % (v,)
        bits = nonfinite_bits(v, single)
    return ('float:0x%08x' % bits) if single else ('double:0x%016x' % bits)


class Walker:
    def __init__(self):
        self.records = []
        self.descs = {}  # class name -> classdesc JSON

    def desc(self, d):
        if d is None or d.get('kind') in ('null', 'reference'):
            return
        if d['kind'] in ('classdesc', 'proxyclassdesc'):
            self.descs[d['class']] = d
            self.desc(d.get('super'))

    def item(self, it):
        k = it['kind']
        if k in ('null', 'reference', 'reset', 'blockdata'):
            return
        if k in ('classdesc', 'proxyclassdesc'):
            self.desc(it)
            return
        if k in ('string', 'longstring'):
            assert isinstance(it['value'], str)
            assert not it.get('truncated'), 'string value truncated by default'
            self.records.append('string "%s"' % esc(it['value']))
            return
        if k == 'exception':
            self.item(it['throwable'])
            self.records.append('aborted ' + it['throwable']['class'])
            return
        self.desc(it['classDesc'])
        if k == 'object':
            fields = []
            for cd in it['classdata']:
                d = self.descs[cd['class']]
                for f in d['fields']:
                    if f['name'] not in cd['fields']:
                        continue
                    v = cd['fields'][f['name']]
                    if f['type'] in PRIM_NAMES:
                        if cd['class'] == 'java.util.HashMap' and f['name'] == 'threshold':
                            continue  # recomputed by HashMap.readObject (Conformance.record)
                        fields.append('%s=%s' % (f['name'], prim(f['type'], v)))
                    else:
                        self.item(v)
                for a in cd.get('annotation', []):
                    self.item(a)
            if not it.get('aborted'):
                self.records.append(' '.join(['object ' + it['class']] + fields))
        elif k == 'array':
            t = it['class'][1]
            parts = ['array ' + it['class']]
            if t in PRIM_NAMES:
                assert not it.get('truncated')
                parts += [prim(t, v) for v in it['elements']]
            else:
                for e in it['elements']:
                    self.item(e)
            if not it.get('aborted'):
                self.records.append(' '.join(parts))
        elif k == 'enum':
            self.records.append('enum %s %s' % (it['class'], it['name']))
        elif k == 'class':
            pass  # ObjectInputStream does not resolve Class objects
        else:
            raise ValueError('unknown kind ' + k)


def dump(flinkstate, path, *extra):
    p = subprocess.run([flinkstate, 'dump', '--json', '--max-array-elements', '100000000',
                        *extra, path], capture_output=True)
    return p.returncode, p.stdout.decode('utf-8', 'surrogatepass'), p.stderr.decode()


def run(flinkstate, *args):
    p = subprocess.run([flinkstate, *args], capture_output=True)
    return p.returncode, p.stdout.decode() + p.stderr.decode()


def summary_problems(flinkstate, path, records):
    """`dump --summary --json` instances per class against the objects the JDK
    resolved (one record per string, object, array, enum it read)."""
    import collections
    if any(r.startswith('aborted ') for r in records):
        return []  # the JDK does not resolve what an aborted item held
    jdk = collections.Counter()
    for r in records:
        p = r.split(' ')
        if p[0] == 'string':
            jdk['java.lang.String'] += 1
        elif p[0] in ('object', 'array', 'enum'):
            jdk[p[1]] += 1
    rc, out, err = dump(flinkstate, path, '--summary')
    if rc != 0:
        return ['dump --summary failed: ' + err.strip()]
    got = collections.Counter({c['class']: c['instances'] for c in json.loads(out)['classes']
                               if not c['class'].startswith('(') and
                               c['class'] != 'java.lang.Class'})
    extra, missing = got - jdk, jdk - got
    # readResolve hands the JDK another class for the same stream object
    # (List.of's CollSer -> ImmutableCollections$ListN): then only the
    # number of such objects must agree, and strings exactly.
    if extra.get('java.lang.String') or missing.get('java.lang.String') or \
            sum(extra.values()) != sum(missing.values()):
        return ['summary instances differ from what the JDK read: summary only %r, JDK only %r'
                % (dict(extra), dict(missing))]
    return []


def main():
    mode, flinkstate, schema_path = sys.argv[1:4]
    with open(schema_path) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = ok = 0
    if mode == 'schema':
        for path in sys.argv[4:]:
            rc, out, err = dump(flinkstate, path)
            if rc != 0:
                print('SKIP %s: %s' % (path, err.strip()))
                continue
            errors = list(validator.iter_errors(json.loads(out)))
            if errors:
                bad += 1
                print('FAIL %s: %s at %s' % (path, errors[0].message, list(errors[0].path)))
            else:
                ok += 1
        print('%d dumps valid, %d invalid' % (ok, bad))
        return 0 if bad == 0 and ok > 0 else 1
    import os
    d = sys.argv[4]
    for f in sorted(os.listdir(d)):
        if not f.endswith('.bin') or f.endswith('.rw.bin'):
            continue
        name = f[:-4]
        path = os.path.join(d, f)
        problems = []
        jdk = ''
        if os.path.exists(os.path.join(d, name + '.jdk.txt')):
            jdk = open(os.path.join(d, name + '.jdk.txt')).read()
        rc, out, err = dump(flinkstate, path)
        if rc != 0:
            if 'cannot be decoded without the class' in err:
                print('SKIP %s: %s' % (name, err.strip()))
                continue
            problems.append('dump failed: ' + err.strip())
        else:
            doc = load_json(out)
            # Schema validation is slow in Python for multi-MB trees (the
            # large_* cases); the small streams cover every construct.
            if len(out) < (2 << 20):
                errors = list(validator.iter_errors(json.loads(out)))
                if errors:
                    problems.append('schema: %s at %s' % (errors[0].message, list(errors[0].path)))
            vpath = os.path.join(d, name + '.values.txt')
            if os.path.exists(vpath):
                w = Walker()
                try:
                    for it in doc['contents']:
                        w.item(it)
                except (AssertionError, ValueError, KeyError) as e:
                    problems.append('walking the dump: %r' % (e,))
                expected = open(vpath, encoding='utf-8').read().splitlines()
                if w.records != expected:
                    for i in range(max(len(expected), len(w.records))):
                        a = w.records[i] if i < len(w.records) else '<end>'
                        e = expected[i] if i < len(expected) else '<end>'
                        # readResolve (List.of's CollSer -> ImmutableCollections
                        # $ListN, ...) hands the JDK another object: only the
                        # position is compared then.
                        if a != e and a.startswith('object ') and e.startswith('object ') and \
                                a.split(' ')[1] != e.split(' ')[1]:
                            continue
                        if a != e:
                            problems.append('record %d: JDK read %r, dump shows %r' % (i, e[:300], a[:300]))
                            break
                problems += summary_problems(flinkstate, path, expected)
            tpath = os.path.join(d, name + '.trailing.txt')
            if os.path.exists(tpath):
                size, offset = map(int, open(tpath).read().split())
                if doc.get('trailing') != {'offset': offset, 'size': size}:
                    problems.append('trailing: JDK writer appended %d bytes at %d, dump says %r'
                                    % (size, offset, doc.get('trailing')))
                vrc, vout = run(flinkstate, 'verify', path)
                want = '%d trailing bytes after the last object at byte %d' % (size, offset)
                if want not in vout:
                    problems.append('verify does not say %r: %s' % (want, vout.strip()))
        if 'OptionalDataException' in jdk or 'read with' in jdk:
            vrc, vout = run(flinkstate, 'verify', path)
            if 'OptionalDataException' in jdk and 'OptionalDataException' not in vout:
                problems.append('verify does not say the JDK throws OptionalDataException: ' + vout)
            if 'read with' in jdk and 'silently drops' not in vout:
                problems.append('verify does not say the JDK drops elements: ' + vout)
            if vrc != 1:
                problems.append('verify exit code %d, expected 1' % vrc)
        if problems:
            bad += 1
            print('FAIL %s\n  %s' % (name, '\n  '.join(problems)), flush=True)
        else:
            ok += 1
            print('OK   %s' % name, flush=True)
    # The inputs as people have them, made by the real tools: each must dump
    # exactly like the raw stream.
    import shutil
    import tempfile
    raw_path = os.path.join(d, 'exact_values.bin')
    rc, want, _ = dump(flinkstate, raw_path)
    with tempfile.TemporaryDirectory() as tmp:
        data = open(raw_path, 'rb').read()
        forms = {
            'gzip': subprocess.run(['gzip', '-c', raw_path], capture_output=True).stdout,
            'xxd -p': subprocess.run(['xxd', '-p', raw_path], capture_output=True).stdout,
            'base64 (76 columns)': subprocess.run(['base64', raw_path], capture_output=True).stdout,
            'base64 with BOM': b'\xef\xbb\xbf' + subprocess.run(
                ['base64', '-w0', raw_path], capture_output=True).stdout + b'\n',
        }
        hexs = forms['xxd -p'].replace(b'\n', b'')
        forms['hex without newlines'] = hexs
        if not shutil.which('kubectl'):
            bad += 1
            print('FAIL input as kubectl output: no kubectl (scripts/install-deps.sh '
                  '--with-java installs kubernetes-client)', flush=True)
        else:
            import base64
            b64 = base64.b64encode(data).decode()
            for fmt in ('json', 'yaml'):
                forms['kubectl -o ' + fmt] = subprocess.run(
                    ['kubectl', 'create', 'configmap', 'flink-cluster-config-map', '--dry-run=client',
                     '-o', fmt, '--from-literal=checkpointID-0000000000000000042=' + b64,
                     '--from-literal=counter=43'], capture_output=True).stdout
        for form, content in forms.items():
            p = os.path.join(tmp, 'input')
            with open(p, 'wb') as f:
                f.write(content)
            rc2, got, err = dump(flinkstate, p)
            if rc != 0 or rc2 != 0 or got != want:
                bad += 1
                print('FAIL input as %s: %s' % (form, err.strip() or 'dump differs'), flush=True)
            else:
                ok += 1
                print('OK   input as %s' % form, flush=True)
        p = os.path.join(tmp, 'empty')
        open(p, 'wb').close()
        rc3, out3 = run(flinkstate, 'dump', p)
        if 'empty file' not in out3 or rc3 != 1:
            bad += 1
            print('FAIL empty file: %s' % out3.strip())
    print('%d checks: dump --json shows what ObjectInputStream read (and the same through every input form), %d differ' % (ok, bad))
    return 0 if bad == 0 and ok > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
