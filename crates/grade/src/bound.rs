//! A bound on a run's messages as a formula of `n`, the number of processes: `n*(n+1)/2 + n`, `2*n*log2(n) + n`.
//! Numbers, `n`, `+ - * / ^`, parentheses and `log2(...)`; evaluated exactly as written, in floating point.

use std::fmt;

/// A formula of `n`, parsed once.
#[derive(Clone, Debug)]
pub struct Formula {
    text: String,
    expr: Expr,
}

#[derive(Clone, Debug)]
enum Expr {
    Number(f64),
    N,
    Log2(Box<Self>),
    Neg(Box<Self>),
    Binary(char, Box<Self>, Box<Self>),
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Formula {
    /// Parses `text`; the error says where it went wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.len() > 200 {
            return Err("a formula of more than 200 characters".to_owned());
        }
        let tokens: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut parser = Parser { tokens: &tokens, at: 0, depth: 0 };
        let expr = parser.sum()?;
        if parser.at != tokens.len() {
            return Err(format!("{text:?}: unexpected {:?}", tokens[parser.at]));
        }
        Ok(Self { text: text.trim().to_owned(), expr })
    }

    /// Its value at `n`.
    pub fn at(&self, n: u64) -> f64 {
        eval(&self.expr, n as f64)
    }

    /// Refuses a formula that is no number of messages at one of `sizes` (`1/0`, `0/0`, `log2(n-n)`): infinite, it
    /// would let every run pass, and not a number, fail every run.
    pub fn finite_at(&self, sizes: impl IntoIterator<Item = u64>) -> Result<(), String> {
        match sizes.into_iter().map(|n| (n, self.at(n))).find(|(_, v)| !v.is_finite()) {
            Some((n, v)) => Err(format!("{:?} is {v} at n = {n}, not a number of messages", self.text)),
            None => Ok(()),
        }
    }
}

fn eval(e: &Expr, n: f64) -> f64 {
    match e {
        Expr::Number(x) => *x,
        Expr::N => n,
        Expr::Log2(x) => eval(x, n).log2(),
        Expr::Neg(x) => -eval(x, n),
        Expr::Binary(op, a, b) => {
            let (a, b) = (eval(a, n), eval(b, n));
            match op {
                '+' => a + b,
                '-' => a - b,
                '*' => a * b,
                '/' => a / b,
                _ => a.powf(b),
            }
        }
    }
}

struct Parser<'a> {
    tokens: &'a [char],
    at: usize,
    depth: u32,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.tokens.get(self.at).copied()
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut left = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.product()?));
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut left = self.power()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.power()?));
        }
        Ok(left)
    }

    fn power(&mut self) -> Result<Expr, String> {
        let base = self.unary()?;
        if self.peek() == Some('^') {
            self.at += 1;
            return Ok(Expr::Binary('^', Box::new(base), Box::new(self.power()?)));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        if self.depth > 50 {
            return Err("a formula nested more than 50 deep".to_owned());
        }
        let result = match self.peek() {
            Some('-') => {
                self.at += 1;
                self.unary().map(|e| Expr::Neg(Box::new(e)))
            }
            Some('(') => {
                self.at += 1;
                let inner = self.sum()?;
                self.close().map(|()| inner)
            }
            Some('n') => {
                self.at += 1;
                Ok(Expr::N)
            }
            Some('l') if self.tokens[self.at..].starts_with(&['l', 'o', 'g', '2', '(']) => {
                self.at += 5;
                let inner = self.sum()?;
                self.close().map(|()| Expr::Log2(Box::new(inner)))
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.at;
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
                    self.at += 1;
                }
                let text: String = self.tokens[start..self.at].iter().collect();
                text.parse().map(Expr::Number).map_err(|_| format!("{text:?} is not a number"))
            }
            Some(c) => Err(format!("unexpected {c:?}: a formula has numbers, n, + - * / ^, ( ) and log2(...)")),
            None => Err("the formula ends too early".to_owned()),
        };
        self.depth -= 1;
        result
    }

    fn close(&mut self) -> Result<(), String> {
        if self.peek() == Some(')') {
            self.at += 1;
            Ok(())
        } else {
            Err("a '(' is not closed".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Formula;

    #[test]
    fn formulas_of_n_evaluate_as_written_and_bad_ones_say_why() {
        let at = |f: &str, n| Formula::parse(f).unwrap().at(n);
        let finite = |f: &str, n| Formula::parse(f).unwrap().finite_at([n]);
        assert_eq!(finite("1/0", 8).unwrap_err(), "\"1/0\" is inf at n = 8, not a number of messages");
        assert!(finite("0/0", 8).unwrap_err().contains("is NaN at n = 8"));
        assert!(finite("n/log2(n)", 1).is_err() && finite("n/log2(n)", 2).is_ok());
        assert_eq!(at("n*(n+1)/2 + n", 8), 44.0);
        assert_eq!(at("2*n*log2(n) + n", 8), 56.0);
        assert_eq!(at("2^n - -1", 3), 9.0);
        assert_eq!(at("n^2/2", 4), 8.0);
        for (bad, says) in
            [("n +", "ends too early"), ("(n", "not closed"), ("n m", "unexpected 'm'"), ("x", "unexpected 'x'")]
        {
            let err = Formula::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert!(Formula::parse(&"(".repeat(60)).unwrap_err().contains("50 deep"));
    }
}
