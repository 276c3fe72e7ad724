//! The parser of the file store's filters: Solr's standard (lucene) query syntax for the subset the
//! module doc of [`super`] lists, tokenised and parsed the way Solr's `QueryParser.jj` reads it, and
//! everything else refused the way Solr refuses it.

use super::{Filter, FilterError, MAX_DEPTH};

/// [`Filter::parse`]: the tokens, then the clauses, then the filter.
pub(super) fn parse(text: &str) -> Result<Filter, FilterError> {
    let tokens = tokenize(text)?;
    if tokens.len() == 1 {
        return Ok(Filter::All);
    }
    let mut p = Parser {
        tokens,
        pos: 0,
        depth: 0,
        text,
    };
    let node = p.query(None)?;
    match p.peek() {
        Tok::Eof => Ok(to_filter(node, true)),
        Tok::RParen => Err(FilterError::UnmatchedParen {
            filter: shown(text),
        }),
        _ => Err(p.unexpected()),
    }
}

fn shown(text: &str) -> String {
    const MAX: usize = 60;
    if text.chars().count() <= MAX {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(MAX).collect();
    format!("{head:?}… ({} characters)", text.chars().count())
}

/// Whitespace as the lucene parser skips it.
fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{3000}')
}

/// A character that may start a term (Solr's `_TERM_START_CHAR`).
fn is_term_start(c: char) -> bool {
    !is_ws(c)
        && !matches!(
            c,
            '+' | '-'
                | '!'
                | '('
                | ')'
                | ':'
                | '^'
                | '['
                | ']'
                | '"'
                | '{'
                | '}'
                | '~'
                | '*'
                | '?'
                | '\\'
                | '/'
        )
}

/// A character that may continue a term (Solr's `_TERM_CHAR`).
fn is_term_char(c: char) -> bool {
    is_term_start(c) || matches!(c, '-' | '+' | '/' | '!')
}

/// A token of the lucene syntax, as its lexer cuts them (longest match: `ANDROID` is a term, `AND`
/// an operator, `-x` a prohibit modifier, `- x` a bare operator).
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    And,
    Or,
    /// `NOT` or `!`.
    Not,
    Plus,
    Minus,
    LParen,
    RParen,
    Colon,
    Star,
    /// A term as written, escapes kept.
    Term(String),
    /// A quoted phrase's inside, escapes kept.
    Quoted(String),
    /// A range: its bounds as written (`None` for `*`), and whether each end is inclusive.
    Range {
        lo: Option<String>,
        hi: Option<String>,
        inclusive: bool,
    },
    Eof,
}

impl Tok {
    fn image(&self) -> String {
        match self {
            Tok::And => "AND".into(),
            Tok::Or => "OR".into(),
            Tok::Not => "NOT".into(),
            Tok::Plus => "+".into(),
            Tok::Minus => "-".into(),
            Tok::LParen => "(".into(),
            Tok::RParen => ")".into(),
            Tok::Colon => ":".into(),
            Tok::Star => "*".into(),
            Tok::Term(t) => t.clone(),
            Tok::Quoted(q) => format!("\"{q}\""),
            Tok::Range { .. } => "[".into(),
            Tok::Eof => "the end".into(),
        }
    }
}

/// Cuts `text` into tokens, each with the character column (from 0, as Solr counts) it starts at.
/// Syntax Solr accepts but the file store does not evaluate is refused here.
fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, FilterError> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied();
    let unsupported = |what: &'static str| FilterError::Unsupported {
        what,
        filter: shown(text),
    };
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_ws(c) {
            i += 1;
            continue;
        }
        let begin = i;
        let tok = match c {
            '(' => {
                i += 1;
                Tok::LParen
            }
            ')' => {
                i += 1;
                Tok::RParen
            }
            ':' => {
                i += 1;
                Tok::Colon
            }
            '+' | '-' | '!' if at(i + 1).is_some_and(is_ws) => {
                return Err(FilterError::BareOperator {
                    op: c,
                    filter: shown(text),
                })
            }
            '+' => {
                i += 1;
                Tok::Plus
            }
            '-' => {
                i += 1;
                Tok::Minus
            }
            '!' => {
                i += 1;
                Tok::Not
            }
            '^' => return Err(unsupported("boosts (^)")),
            '~' => return Err(unsupported("fuzzy and proximity searches (~)")),
            '/' => return Err(unsupported("regular expressions (/…/)")),
            '{' if at(i + 1) == Some('!') => return Err(unsupported("local parameters ({!…})")),
            '"' => {
                i += 1;
                let mut inner = String::new();
                loop {
                    match at(i) {
                        None => {
                            return Err(FilterError::Unclosed {
                                filter: shown(text),
                            })
                        }
                        Some('"') => break,
                        Some('\\') => {
                            inner.push('\\');
                            if let Some(n) = at(i + 1) {
                                inner.push(n);
                            }
                            i += 2;
                        }
                        Some(ch) => {
                            inner.push(ch);
                            i += 1;
                        }
                    }
                }
                i += 1;
                Tok::Quoted(inner)
            }
            '[' | '{' => {
                let (range, end) = range(&chars, i, text)?;
                i = end;
                range
            }
            _ => {
                // A term, a wildcard term or an operator word: the longest run of term characters.
                let mut raw = String::new();
                let mut wild = false;
                while let Some(ch) = at(i) {
                    if ch == '\\' {
                        raw.push(ch);
                        if let Some(n) = at(i + 1) {
                            raw.push(n);
                        }
                        i += 2;
                    } else if is_term_char(ch) || (ch == '*' || ch == '?') {
                        wild |= ch == '*' || ch == '?';
                        raw.push(ch);
                        i += 1;
                    } else {
                        break;
                    }
                }
                if raw.is_empty() {
                    // Only `]` and `}` get here: they close nothing outside a range.
                    return Err(FilterError::Syntax {
                        found: c.to_string(),
                        column: begin,
                        filter: shown(text),
                    });
                }
                match raw.as_str() {
                    "*" => Tok::Star,
                    "AND" | "&&" => Tok::And,
                    "OR" | "||" => Tok::Or,
                    "NOT" => Tok::Not,
                    "filter" if at(i) == Some('(') => return Err(unsupported("filter(…) clauses")),
                    _ if wild => return Err(unsupported("wildcards (* and ? inside a value)")),
                    _ => Tok::Term(raw),
                }
            }
        };
        tokens.push((tok, begin));
    }
    tokens.push((Tok::Eof, chars.len()));
    Ok(tokens)
}

/// The range that starts at `chars[start]` (`[` or `{`), and the index after it. Its bounds are a
/// quoted phrase or a run of characters up to a space, `]` or `}` (Solr's range mode).
fn range(chars: &[char], start: usize, text: &str) -> Result<(Tok, usize), FilterError> {
    let open = chars[start];
    let mut i = start + 1;
    let mut words: Vec<(String, bool)> = Vec::new();
    loop {
        while chars.get(i).copied().is_some_and(is_ws) {
            i += 1;
        }
        match chars.get(i) {
            None => {
                return Err(FilterError::Unclosed {
                    filter: shown(text),
                })
            }
            Some(&close @ (']' | '}')) => {
                i += 1;
                let bad = || FilterError::BadRange {
                    range: chars[start..i].iter().collect(),
                };
                let [(lo, lo_q), (to, false), (hi, hi_q)] = words.as_slice() else {
                    return Err(bad());
                };
                if to != "TO" {
                    return Err(bad());
                }
                if open == '{' || close == '}' {
                    return Err(FilterError::Unsupported {
                        what: "ranges that leave an end out ({a TO b}); write [a TO b]",
                        filter: shown(text),
                    });
                }
                let bound = |w: &String, quoted: bool| (quoted || w != "*").then(|| w.clone());
                return Ok((
                    Tok::Range {
                        lo: bound(lo, *lo_q),
                        hi: bound(hi, *hi_q),
                        inclusive: true,
                    },
                    i,
                ));
            }
            Some('"') => {
                let mut word = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(FilterError::Unclosed {
                                filter: shown(text),
                            })
                        }
                        Some('"') => break,
                        Some('\\') => {
                            word.push('\\');
                            if let Some(&n) = chars.get(i + 1) {
                                word.push(n);
                            }
                            i += 2;
                        }
                        Some(&ch) => {
                            word.push(ch);
                            i += 1;
                        }
                    }
                }
                i += 1;
                words.push((word, true));
            }
            Some(_) => {
                let mut word = String::new();
                while let Some(&ch) = chars.get(i) {
                    if is_ws(ch) || ch == ']' || ch == '}' {
                        break;
                    }
                    word.push(ch);
                    i += 1;
                }
                words.push((word, false));
            }
        }
    }
}

/// How a clause is joined to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conj {
    None,
    And,
    Or,
}

/// A clause's prefix: `+`, `-`/`!`/`NOT`, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    None,
    Required,
    Prohibited,
}

/// How a clause takes part in a boolean query (Lucene's `BooleanClause.Occur`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Occur {
    Must,
    Should,
    MustNot,
}

/// A parsed query before it becomes a [`Filter`]: a leaf, or a boolean query as Lucene builds it.
#[derive(Debug)]
enum Node {
    Leaf(Filter),
    Bool(Vec<(Occur, Node)>),
}

/// The occurs Lucene's `QueryParserBase.addClause` gives a group's clauses under the default
/// operator `q.op` (AND when `and_default`).
fn occurs(joins: &[(Conj, Modifier)], and_default: bool) -> Vec<Occur> {
    let mut out: Vec<Occur> = Vec::with_capacity(joins.len());
    for &(conj, modifier) in joins {
        if let Some(last) = out.last_mut() {
            if conj == Conj::And && *last != Occur::MustNot {
                *last = Occur::Must;
            }
            if and_default && conj == Conj::Or && *last != Occur::MustNot {
                *last = Occur::Should;
            }
        }
        let prohibited = modifier == Modifier::Prohibited;
        let required = if and_default {
            !prohibited && conj != Conj::Or
        } else {
            modifier == Modifier::Required || (conj == Conj::And && !prohibited)
        };
        out.push(if prohibited {
            Occur::MustNot
        } else if required {
            Occur::Must
        } else {
            Occur::Should
        });
    }
    out
}

/// What a group of occurs matches, as (clauses all required, clauses one of which is required,
/// clauses excluded): `SHOULD` clauses count only when there is no `MUST`, and one alone is required.
fn meaning(occurs: &[Occur]) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let of = |o: Occur| -> Vec<usize> { (0..occurs.len()).filter(|&i| occurs[i] == o).collect() };
    let (must, should, not) = (of(Occur::Must), of(Occur::Should), of(Occur::MustNot));
    match (must.is_empty(), should.len()) {
        (false, _) => (must, Vec::new(), not),
        (true, 1) => (should, Vec::new(), not),
        (true, _) => (Vec::new(), should, not),
    }
}

/// A recursive-descent parser on the lines of Solr's `QueryParser.jj`:
/// `Query := Modifier? Clause (Conjunction? Modifier? Clause)*`,
/// `Clause := (field ':')? (Term | '(' Query ')')`.
struct Parser<'t> {
    tokens: Vec<(Tok, usize)>,
    pos: usize,
    /// Parentheses open around the current token.
    depth: usize,
    text: &'t str,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.tokens[self.pos].0
    }

    fn peek2(&self) -> &Tok {
        &self.tokens[(self.pos + 1).min(self.tokens.len() - 1)].0
    }

    fn take(&mut self) -> Tok {
        let t = self.tokens[self.pos].0.clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    /// Solr's answer to the current token: a syntax error (400).
    fn unexpected(&self) -> FilterError {
        let (tok, column) = &self.tokens[self.pos];
        if *tok == Tok::Eof {
            return FilterError::MissingClause {
                filter: shown(self.text),
            };
        }
        FilterError::Syntax {
            found: tok.image(),
            column: *column,
            filter: shown(self.text),
        }
    }

    fn modifier(&mut self) -> Modifier {
        match self.peek() {
            Tok::Plus => {
                self.take();
                Modifier::Required
            }
            Tok::Minus | Tok::Not => {
                self.take();
                Modifier::Prohibited
            }
            _ => Modifier::None,
        }
    }

    fn starts_clause(t: &Tok) -> bool {
        matches!(
            t,
            Tok::Not
                | Tok::Plus
                | Tok::Minus
                | Tok::LParen
                | Tok::Star
                | Tok::Term(_)
                | Tok::Quoted(_)
                | Tok::Range { .. }
        )
    }

    fn query(&mut self, field: Option<&str>) -> Result<Node, FilterError> {
        let mut joins = Vec::new();
        let mut nodes = Vec::new();
        let first = self.modifier();
        nodes.push(self.clause(field)?);
        joins.push((Conj::None, first));
        loop {
            let conj = match self.peek() {
                Tok::And => Conj::And,
                Tok::Or => Conj::Or,
                t if Self::starts_clause(t) => Conj::None,
                _ => break,
            };
            if conj != Conj::None {
                self.take();
            }
            let modifier = self.modifier();
            nodes.push(self.clause(field)?);
            joins.push((conj, modifier));
        }
        if nodes.len() == 1 && first == Modifier::None {
            return Ok(nodes.pop().expect("one clause"));
        }
        let (or, and) = (occurs(&joins, false), occurs(&joins, true));
        if meaning(&or) != meaning(&and) {
            return Err(FilterError::DependsOnDefaultOperator {
                filter: shown(self.text),
            });
        }
        Ok(Node::Bool(or.into_iter().zip(nodes).collect()))
    }

    fn clause(&mut self, field: Option<&str>) -> Result<Node, FilterError> {
        let mut field = field.map(str::to_owned);
        if matches!(self.peek(), Tok::Term(_) | Tok::Star) && *self.peek2() == Tok::Colon {
            field = Some(match self.take() {
                Tok::Term(raw) => unescape(&raw),
                _ => "*".to_owned(),
            });
            self.take();
        }
        match self.peek().clone() {
            Tok::LParen => {
                self.take();
                if self.depth == MAX_DEPTH {
                    return Err(FilterError::TooDeep { limit: MAX_DEPTH });
                }
                self.depth += 1;
                let inner = self.query(field.as_deref())?;
                match self.peek() {
                    Tok::RParen => {}
                    Tok::Eof => {
                        return Err(FilterError::MissingParen {
                            filter: shown(self.text),
                        })
                    }
                    _ => return Err(self.unexpected()),
                }
                self.take();
                self.depth -= 1;
                Ok(inner)
            }
            tok @ (Tok::Star | Tok::Term(_) | Tok::Quoted(_) | Tok::Range { .. }) => {
                let Some(field) = field else {
                    return Err(FilterError::NoField {
                        clause: tok.image(),
                    });
                };
                self.take();
                let leaf = match tok {
                    Tok::Star if field == "*" => Filter::All,
                    _ if field == "*" => {
                        return Err(FilterError::Unsupported {
                            what: "the field * other than in *:*",
                            filter: shown(self.text),
                        })
                    }
                    Tok::Star => Filter::Present(field),
                    Tok::Term(raw) | Tok::Quoted(raw) => Filter::Term {
                        field,
                        value: unescape(&raw),
                    },
                    Tok::Range { lo, hi, .. } => match (lo, hi) {
                        (None, None) => Filter::Present(field),
                        (lo, hi) => Filter::Range {
                            field,
                            lo: lo.as_deref().map(unescape),
                            hi: hi.as_deref().map(unescape),
                        },
                    },
                    _ => unreachable!("matched above"),
                };
                Ok(Node::Leaf(leaf))
            }
            _ => Err(self.unexpected()),
        }
    }
}

/// The filter a parsed query stands for. A query of prohibited clauses only matches nothing in
/// Lucene; Solr makes the outermost one (`-a`, `(-a)`, `field:(-a)`) match every document but
/// those, and leaves nested ones matching nothing (`x:1 OR (-a)` is `x:1`).
fn to_filter(node: Node, top: bool) -> Filter {
    let clauses = match node {
        Node::Leaf(f) => return f,
        Node::Bool(clauses) => clauses,
    };
    let occurs: Vec<Occur> = clauses.iter().map(|(o, _)| *o).collect();
    let (all, any, not) = meaning(&occurs);
    if all.is_empty() && any.is_empty() && !top {
        return Filter::Not(Box::new(Filter::All));
    }
    let mut nodes: Vec<Option<Node>> = clauses.into_iter().map(|(_, n)| Some(n)).collect();
    let mut take = |i: usize| to_filter(nodes[i].take().expect("each clause once"), false);
    let mut parts: Vec<Filter> = all.into_iter().map(&mut take).collect();
    if !any.is_empty() {
        parts.push(Filter::Or(any.into_iter().map(&mut take).collect()));
    }
    parts.extend(not.into_iter().map(|i| Filter::Not(Box::new(take(i)))));
    if parts.len() == 1 {
        parts.pop().expect("one part")
    } else {
        Filter::And(parts)
    }
}

/// A value with its backslash escapes resolved.
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}
