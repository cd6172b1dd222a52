//! Questions on the terminal (a user name, a password without echo), for `olm registry login`:
//! the prompt goes to stderr, the answer comes from stdin, which must be a terminal.

use std::io::{BufRead as _, IsTerminal as _, Write as _};

/// Whether stdin is a terminal one can ask on.
pub fn can_ask() -> bool {
    std::io::stdin().is_terminal()
}

fn read_answer() -> std::io::Result<String> {
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "no answer (end of input)",
        ));
    }
    let trimmed = line.trim_end_matches('\n').trim_end_matches('\r');
    Ok(trimmed.to_string())
}

/// Asks `prompt` and reads one line, echoed as typed.
pub fn line(prompt: &str) -> std::io::Result<String> {
    let mut err = std::io::stderr().lock();
    write!(err, "{prompt}")?;
    err.flush()?;
    read_answer()
}

/// Puts the terminal's settings back when dropped, so an error (or a panic) while reading does
/// not leave the shell without echo.
struct Restore(libc::termios);

impl Drop for Restore {
    fn drop(&mut self) {
        // SAFETY: fd 0 is the terminal the settings were read from; the pointer is to a valid
        // termios.
        unsafe {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.0);
        }
    }
}

/// Asks `prompt` and reads one line with the terminal's echo off (a password).
pub fn secret(prompt: &str) -> std::io::Result<String> {
    let mut err = std::io::stderr().lock();
    write!(err, "{prompt}")?;
    err.flush()?;
    // SAFETY: termios is plain data; tcgetattr fills it in and reports failure by its result.
    let mut saved: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut saved) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut quiet = saved;
    quiet.c_lflag &= !libc::ECHO;
    // SAFETY: as above; `quiet` is a copy of valid settings with one flag cleared.
    if unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &quiet) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let restore = Restore(saved);
    let answer = read_answer();
    drop(restore);
    // The newline the user typed was not echoed either.
    writeln!(err)?;
    answer
}
