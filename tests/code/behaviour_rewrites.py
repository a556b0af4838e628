"""Correct hand-written rewrites of the 64 project tasks' reference solutions.

Each computes what ``datasets/tasks/tasks.jsonl``'s ``expected_code`` computes (same name, same
parameters, same results and exceptions) written another way, as a person solving the task
without seeing the reference would: other algorithms, other names, no copied docstring. Used
by ``tests/code/test_behaviour.py`` and ``benchmarks/bench_behaviour.py`` as the "correct
rewrite" that a no-test score must rank above dead code, comments and one-operator bugs.
"""

from __future__ import annotations

REWRITES: dict[str, str] = {
    "t001": "def add(a, b):\n    total = a\n    total += b\n    return total\n",
    "t002": "def reverse_string(text):\n    return ''.join(reversed(text))\n",
    "t003": "def is_even(n):\n    return (n & 1) == 0\n",
    "t004": "def square(x):\n    return x ** 2\n",
    "t005": (
        "def largest(numbers):\n"
        "    if len(numbers) == 0:\n"
        "        raise ValueError('empty list')\n"
        "    best = numbers[0]\n"
        "    for n in numbers[1:]:\n"
        "        if n > best:\n"
        "            best = n\n"
        "    return best\n"
    ),
    "t006": (
        "def count_vowels(text):\n"
        "    n = 0\n"
        "    for c in text:\n"
        "        if c in 'aeiouAEIOU':\n"
        "            n += 1\n"
        "    return n\n"
    ),
    "t007": "def first_element(items):\n    return items[0] if items else None\n",
    "t008": "def celsius_to_fahrenheit(celsius):\n    return 32 + celsius * 1.8\n",
    "t009": (
        "def count_words(sentence):\n"
        "    count, inside = 0, False\n"
        "    for ch in sentence:\n"
        "        if ch.isspace():\n"
        "            inside = False\n"
        "        elif not inside:\n"
        "            inside = True\n"
        "            count += 1\n"
        "    return count\n"
    ),
    "t010": "def sum_list(numbers):\n    return sum(numbers)\n",
    "t011": (
        "def is_palindrome(text):\n"
        "    i, j = 0, len(text) - 1\n"
        "    while i < j:\n"
        "        if text[i] != text[j]:\n"
        "            return False\n"
        "        i, j = i + 1, j - 1\n"
        "    return True\n"
    ),
    "t012": "def absolute_difference(a, b):\n    return a - b if a > b else b - a\n",
    "t013": "def greet(name):\n    return 'Hello, ' + name + '!'\n",
    "t014": "def double_all(numbers):\n    return list(map(lambda n: n + n, numbers))\n",
    "t015": "def last_character(text):\n    return text[len(text) - 1] if text else ''\n",
    "t016": "def is_positive(number):\n    return not number <= 0\n",
    "t017": (
        "def average(numbers):\n"
        "    if not numbers:\n"
        "        raise ValueError('no numbers')\n"
        "    total = 0\n"
        "    for n in numbers:\n"
        "        total += n\n"
        "    return total / len(numbers)\n"
    ),
    "t018": "def count_occurrences(items, target):\n    return items.count(target)\n",
    "t019": (
        "def factorial(n):\n"
        "    if n < 0:\n"
        "        raise ValueError('negative')\n"
        "    import math\n"
        "    return math.prod(range(1, n + 1))\n"
    ),
    "t020": (
        "def fibonacci(n):\n"
        "    if n < 0:\n"
        "        raise ValueError('negative')\n"
        "    seq = [0, 1]\n"
        "    while len(seq) <= n:\n"
        "        seq.append(seq[-1] + seq[-2])\n"
        "    return seq[n]\n"
    ),
    "t021": (
        "def fizzbuzz(n):\n"
        "    out = []\n"
        "    for i in range(1, n + 1):\n"
        "        word = ('Fizz' if i % 3 == 0 else '') + ('Buzz' if i % 5 == 0 else '')\n"
        "        out.append(word or str(i))\n"
        "    return out\n"
    ),
    "t022": (
        "def is_prime(n):\n"
        "    if n <= 1:\n"
        "        return False\n"
        "    return all(n % d for d in range(2, int(n ** 0.5) + 1))\n"
    ),
    "t023": "def remove_duplicates(items):\n    return list(dict.fromkeys(items))\n",
    "t024": (
        "def word_frequencies(text):\n"
        "    from collections import Counter\n"
        "    return dict(Counter(w.lower() for w in text.split()))\n"
    ),
    "t025": (
        "def capitalize_words(sentence):\n"
        "    parts = sentence.split(' ')\n"
        "    return ' '.join(p[0].upper() + p[1:] if p else p for p in parts)\n"
    ),
    "t026": (
        "def flatten(nested):\n"
        "    out = []\n"
        "    for inner in nested:\n"
        "        out.extend(inner)\n"
        "    return out\n"
    ),
    "t027": (
        "def chunk_list(items, size):\n"
        "    if size <= 0:\n"
        "        raise ValueError('size')\n"
        "    chunks = []\n"
        "    i = 0\n"
        "    while i < len(items):\n"
        "        chunks.append(items[i:i + size])\n"
        "        i += size\n"
        "    return chunks\n"
    ),
    "t028": "def gcd(a, b):\n    import math\n    return math.gcd(a, b)\n",
    "t029": (
        "def binary_to_int(bits):\n"
        "    if bits == '' or set(bits) - {'0', '1'}:\n"
        "        raise ValueError('not binary')\n"
        "    return int(bits, 2)\n"
    ),
    "t030": (
        "def count_char_types(text):\n"
        "    letters = sum(c.isalpha() for c in text)\n"
        "    digits = sum(c.isdigit() and not c.isalpha() for c in text)\n"
        "    spaces = sum(c.isspace() and not c.isalnum() for c in text)\n"
        "    return {'letters': letters, 'digits': digits, 'spaces': spaces,\n"
        "            'other': len(text) - letters - digits - spaces}\n"
    ),
    "t031": (
        "def second_largest(numbers):\n"
        "    top = second = None\n"
        "    for n in numbers:\n"
        "        if top is None or n > top:\n"
        "            top, second = n, top\n"
        "        elif n != top and (second is None or n > second):\n"
        "            second = n\n"
        "    return second\n"
    ),
    "t032": (
        "def merge_counts(first, second):\n"
        "    out = {}\n"
        "    for d in (first, second):\n"
        "        for k, v in d.items():\n"
        "            out[k] = out.get(k, 0) + v\n"
        "    return out\n"
    ),
    "t033": (
        "def invert_dict(mapping):\n"
        "    if len(set(mapping.values())) != len(mapping):\n"
        "        raise ValueError('values are not unique')\n"
        "    return {v: k for k, v in mapping.items()}\n"
    ),
    "t034": (
        "def caesar_cipher(text, shift):\n"
        "    import string\n"
        "    lo, up = string.ascii_lowercase, string.ascii_uppercase\n"
        "    k = shift % 26\n"
        "    table = str.maketrans(lo + up, lo[k:] + lo[:k] + up[k:] + up[:k])\n"
        "    return text.translate(table)\n"
    ),
    "t035": (
        "def is_anagram(first, second):\n"
        "    from collections import Counter\n"
        "    clean = lambda s: Counter(s.lower().replace(' ', ''))\n"
        "    return clean(first) == clean(second)\n"
    ),
    "t036": (
        "def running_total(numbers):\n"
        "    import itertools\n"
        "    return list(itertools.accumulate(numbers))\n"
    ),
    "t037": (
        "def clamp(value, low, high):\n"
        "    if high < low:\n"
        "        raise ValueError('empty range')\n"
        "    if value < low:\n"
        "        return low\n"
        "    if value > high:\n"
        "        return high\n"
        "    return value\n"
    ),
    "t038": (
        "def parse_key_values(text):\n"
        "    pairs = {}\n"
        "    for chunk in text.split(';'):\n"
        "        if chunk.strip() == '':\n"
        "            continue\n"
        "        key, sep, value = chunk.partition('=')\n"
        "        if not sep:\n"
        "            raise ValueError('missing =')\n"
        "        pairs[key.strip()] = value.strip()\n"
        "    return pairs\n"
    ),
    "t039": "def digit_sum(n):\n    return sum(int(d) for d in str(abs(n)))\n",
    "t040": (
        "def rotate_right(items, k):\n"
        "    n = len(items)\n"
        "    if n == 0:\n"
        "        return []\n"
        "    return [items[(i - k) % n] for i in range(n)]\n"
    ),
    "t041": (
        "def is_valid_username(name):\n"
        "    import re\n"
        "    return re.fullmatch(r'[A-Za-z][A-Za-z0-9_]{2,15}', name) is not None\n"
    ),
    "t042": (
        "def median(numbers):\n"
        "    if len(numbers) == 0:\n"
        "        raise ValueError('empty')\n"
        "    s = sorted(numbers)\n"
        "    n = len(s)\n"
        "    if n % 2 == 1:\n"
        "        return float(s[n // 2])\n"
        "    return (s[n // 2 - 1] + s[n // 2]) / 2\n"
    ),
    "t043": (
        "def safe_divide(numerator, denominator):\n"
        "    try:\n"
        "        return numerator / denominator\n"
        "    except ZeroDivisionError:\n"
        "        return None\n"
    ),
    "t044": (
        "def count_set_bits(n):\n"
        "    if n < 0:\n"
        "        raise ValueError('negative')\n"
        "    return bin(n).count('1')\n"
    ),
    "t045": (
        "def sort_by_length(words):\n"
        "    indexed = sorted(enumerate(words), key=lambda p: (len(p[1]), p[0]))\n"
        "    return [w for _, w in indexed]\n"
    ),
    "t046": (
        "def append_if_missing(items, value):\n"
        "    for item in items:\n"
        "        if item == value:\n"
        "            return items\n"
        "    items.append(value)\n"
        "    return items\n"
    ),
    "t047": (
        "def title_to_slug(title):\n"
        "    import re\n"
        "    return '-'.join(re.findall(r'[a-z0-9]+', title.lower()))\n"
    ),
    "t048": (
        "def int_to_roman(number):\n"
        "    if number < 1 or number > 3999:\n"
        "        raise ValueError('out of range')\n"
        "    ones = ['', 'I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX']\n"
        "    tens = ['', 'X', 'XX', 'XXX', 'XL', 'L', 'LX', 'LXX', 'LXXX', 'XC']\n"
        "    hundreds = ['', 'C', 'CC', 'CCC', 'CD', 'D', 'DC', 'DCC', 'DCCC', 'CM']\n"
        "    return ('M' * (number // 1000) + hundreds[number // 100 % 10]\n"
        "            + tens[number // 10 % 10] + ones[number % 10])\n"
    ),
    "t049": (
        "def roman_to_int(numeral):\n"
        "    value = dict(zip('IVXLCDM', [1, 5, 10, 50, 100, 500, 1000]))\n"
        "    if not numeral or not set(numeral) <= set(value):\n"
        "        raise ValueError('bad numeral')\n"
        "    vals = [value[ch] for ch in numeral]\n"
        "    nxt = vals[1:] + [0]\n"
        "    return sum(-v if after > v else v for v, after in zip(vals, nxt))\n"
    ),
    "t050": (
        "def balanced_brackets(text):\n"
        "    closing = {'(': ')', '[': ']', '{': '}'}\n"
        "    expected = []\n"
        "    for ch in text:\n"
        "        if ch in closing:\n"
        "            expected.append(closing[ch])\n"
        "        elif ch in ')]}':\n"
        "            if not expected or expected.pop() != ch:\n"
        "                return False\n"
        "    return len(expected) == 0\n"
    ),
    "t051": (
        "def run_length_encode(text):\n"
        "    import itertools\n"
        "    return ''.join(f'{ch}{len(list(group))}' for ch, group in itertools.groupby(text))\n"
    ),
    "t052": (
        "def run_length_decode(encoded):\n"
        "    out, i, n = '', 0, len(encoded)\n"
        "    while i < n:\n"
        "        ch = encoded[i]\n"
        "        if ch.isdigit():\n"
        "            raise ValueError('count without character')\n"
        "        j = i + 1\n"
        "        while j < n and encoded[j].isdigit():\n"
        "            j += 1\n"
        "        if j == i + 1:\n"
        "            raise ValueError('character without count')\n"
        "        out += ch * int(encoded[i + 1:j])\n"
        "        i = j\n"
        "    return out\n"
    ),
    "t053": (
        "def evaluate_rpn(tokens):\n"
        "    import operator\n"
        "    def div(a, b):\n"
        "        if b == 0:\n"
        "            raise ValueError('division by zero')\n"
        "        q = abs(a) // abs(b)\n"
        "        return q if (a < 0) == (b < 0) else -q\n"
        "    ops = {'+': operator.add, '-': operator.sub, '*': operator.mul, '/': div}\n"
        "    stack = []\n"
        "    for tok in tokens:\n"
        "        if tok in ops:\n"
        "            if len(stack) < 2:\n"
        "                raise ValueError('missing operand')\n"
        "            b, a = stack.pop(), stack.pop()\n"
        "            stack.append(ops[tok](a, b))\n"
        "        else:\n"
        "            try:\n"
        "                stack.append(int(tok))\n"
        "            except ValueError:\n"
        "                raise ValueError('bad token') from None\n"
        "    if len(stack) != 1:\n"
        "        raise ValueError('malformed')\n"
        "    return stack[0]\n"
    ),
    "t054": (
        "def longest_common_prefix(words):\n"
        "    import os\n"
        "    return os.path.commonprefix(list(words)) if words else ''\n"
    ),
    "t055": (
        "def merge_intervals(intervals):\n"
        "    out = []\n"
        "    for lo, hi in sorted(intervals, key=lambda p: (p[0], p[1])):\n"
        "        if out and lo <= out[-1][1]:\n"
        "            if hi > out[-1][1]:\n"
        "                out[-1][1] = hi\n"
        "        else:\n"
        "            out.append([lo, hi])\n"
        "    return out\n"
    ),
    "t056": (
        "def binary_search(items, target):\n"
        "    def find(lo, hi):\n"
        "        if lo > hi:\n"
        "            return -1\n"
        "        mid = lo + (hi - lo) // 2\n"
        "        if items[mid] == target:\n"
        "            return mid\n"
        "        if items[mid] < target:\n"
        "            return find(mid + 1, hi)\n"
        "        return find(lo, mid - 1)\n"
        "    return find(0, len(items) - 1)\n"
    ),
    "t057": (
        "def transpose(matrix):\n"
        "    if not matrix:\n"
        "        return []\n"
        "    if len({len(r) for r in matrix}) > 1:\n"
        "        raise ValueError('ragged')\n"
        "    return [list(col) for col in zip(*matrix)]\n"
    ),
    "t058": (
        "import re\n"
        "\n"
        "def parse_duration(text):\n"
        "    m = re.fullmatch(r'(?:(?P<h>\\d+)h)?(?:(?P<m>\\d+)m)?(?:(?P<s>\\d+)s)?', text)\n"
        "    if m is None or text == '':\n"
        "        raise ValueError('bad duration')\n"
        "    h, mi, s = (int(m.group(k) or 0) for k in 'hms')\n"
        "    return (h * 60 + mi) * 60 + s\n"
    ),
    "t059": (
        "def word_wrap(text, width):\n"
        "    if width <= 0:\n"
        "        raise ValueError('width')\n"
        "    lines, line = [], []\n"
        "    for word in text.split():\n"
        "        if line and len(' '.join(line + [word])) > width:\n"
        "            lines.append(' '.join(line))\n"
        "            line = []\n"
        "        line.append(word)\n"
        "    if line:\n"
        "        lines.append(' '.join(line))\n"
        "    return lines\n"
    ),
    "t060": (
        "def top_k_frequent(words, k):\n"
        "    from collections import Counter\n"
        "    counts = Counter(words)\n"
        "    return sorted(counts, key=lambda w: (-counts[w], w))[:k]\n"
    ),
    "t061": (
        "def is_valid_ipv4(address):\n"
        "    parts = address.split('.')\n"
        "    return len(parts) == 4 and all(\n"
        "        p.isascii() and p.isdigit() and str(int(p)) == p and int(p) <= 255\n"
        "        for p in parts\n"
        "    )\n"
    ),
    "t062": (
        "def group_anagrams(words):\n"
        "    order, groups = [], {}\n"
        "    for w in words:\n"
        "        key = tuple(sorted(w))\n"
        "        if key not in groups:\n"
        "            groups[key] = []\n"
        "            order.append(key)\n"
        "        groups[key].append(w)\n"
        "    return [groups[k] for k in order]\n"
    ),
    "t063": (
        "def levenshtein_distance(first, second):\n"
        "    m, n = len(first), len(second)\n"
        "    d = [[0] * (n + 1) for _ in range(m + 1)]\n"
        "    for i in range(m + 1):\n"
        "        d[i][0] = i\n"
        "    for j in range(n + 1):\n"
        "        d[0][j] = j\n"
        "    for i in range(1, m + 1):\n"
        "        for j in range(1, n + 1):\n"
        "            cost = 0 if first[i - 1] == second[j - 1] else 1\n"
        "            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)\n"
        "    return d[m][n]\n"
    ),
    "t064": (
        "def parse_csv_line(line):\n"
        "    out, cur, quoted, i = [], '', False, 0\n"
        "    while i < len(line):\n"
        "        c = line[i]\n"
        "        if quoted and c == '\"' and line[i + 1:i + 2] == '\"':\n"
        "            cur += '\"'\n"
        "            i += 2\n"
        "            continue\n"
        "        if c == '\"':\n"
        "            quoted = not quoted\n"
        "        elif c == ',' and not quoted:\n"
        "            out.append(cur)\n"
        "            cur = ''\n"
        "        else:\n"
        "            cur += c\n"
        "        i += 1\n"
        "    if quoted:\n"
        "        raise ValueError('unterminated quote')\n"
        "    return out + [cur]\n"
    ),
}
