import random, sys
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
words = ["hello","world","Mr","Dr","e.g","i.e","U.S.A","café","Bonjour","weekend","it's","don't","3.5","1,000","42","1999","$5","A","I","the","cat","Smith","naïve","x","TV","OK","u.s.a.'s","über","ich","le","l'homme","señor","año","Zürich","", "hello-world", "co-op", "XIV", "IV", "I", "3", "2.", "12", "december", "szerda", "O'Neil", "'s", "a.m", "p.m"]
puncts = ["\u2029", "\u0085", "\u2028", "\r\n", "(", ")", "\u037e", "\u0589", "\u3002X", "\u061f", "\u055e", "\u2049", ". ", "., ", "\u00bf", "\u00a1", "\u2026\u2026", "\u200c", "\u2014\u2014", ".", "?", "!", ",", ":", ";", "...", "..", "?!", "!?", ".,", ",.", "…", "—", "–", " - ", "--", "。", "、", "！", "？", "，", "¿", "¡", "·", "؟", "।", "‼", "⁉", ";.", "!!!", ". .", ":-)"]
wrap = [("\"","\""),("“","”"),("'","'"),("(",")"),("[","]"),("«","»"),("",""),("",""),("","")]
spaces = [" ", " ", " ", "  ", "\n", "\n\n", "\t", " \n \n", "\u00a0", "\u2003", ""]
voices = ["en-us"]*6 + ["fr", "de", "es", "en-gb-x-rp", "hu", "nl", "fi", "da", "nb", "sl", "lv", "pt-br", "it", "pl"]
out = []
for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3000):
    parts = []
    for j in range(random.randint(1, 12)):
        w = random.choice(words)
        if random.random() < 0.3: w = w.capitalize()
        if random.random() < 0.15:
            a, b = random.choice(wrap); w = a + w + b
        parts.append(w)
        if random.random() < 0.45: parts.append(random.choice(puncts))
        parts.append(random.choice(spaces))
    text = "".join(parts)
    if random.random() < 0.3: text = text.strip()
    out.append(random.choice(voices) + "\x1f" + text)
sys.stdout.write("\x1e".join(out))
