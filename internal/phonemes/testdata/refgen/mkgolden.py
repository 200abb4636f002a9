import random, subprocess, sys
sys.path.insert(0, '.')
from curated import C
random.seed(7)
def pad(t):
    return t + ' ' if t.endswith('..') and not t.endswith('...') else t
recs = [v + "\x1f" + pad(t) for v, t in C]
lj = open('lj.rec', encoding='utf-8').read().split('\x1e')
recs += random.sample(lj, 200)
rnd = subprocess.run(['python3', 'gen_corpus.py', '4', '2400'], capture_output=True, text=True).stdout.split('\x1e')
for r in rnd:
    v, t = r.split('\x1f', 1)
    recs.append(v + '\x1f' + pad(t))
# Long clauses without punctuation, which ReadClause splits when its buffer fills (no terminator).
longwords = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu 1999 3.5 e.g. Mr. (aside) \"quote\" it's".split()
for n in range(20):
    parts = []
    for i in range(random.randint(150, 600)):
        parts.append(random.choice(longwords))
        x = random.random()
        if x < 0.003: parts.append(",")
        elif x < 0.004: parts.append(".")
    recs.append("en-us\x1f" + pad(" ".join(parts)))
import json
bad = set()
try:
    bad = set(json.load(open('bad.json')))
except FileNotFoundError:
    pass
recs = [r for r in recs if r not in bad]
open('golden.rec', 'w', encoding='utf-8').write('\x1e'.join(recs))
print(len(recs), "records,", len(bad), "dropped")
