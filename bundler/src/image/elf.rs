//! Just enough ELF to pack a dynamic binary: the machine (for the image's os/arch), the
//! program interpreter (`PT_INTERP`), and the `DT_NEEDED`/`DT_RPATH`/`DT_RUNPATH` entries
//! of the dynamic section, followed transitively to the shared-library closure the loader
//! would map, using the loader's search order (RPATH, RUNPATH, ld.so.conf, default dirs).
//!
//! A hand-written reader keeps the dependency tree lean; it reads headers only and checks
//! every offset against the file size, so a truncated or hostile file is an error, never a
//! panic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
const DT_STRSZ: u64 = 10;
const DT_RPATH: u64 = 15;
const DT_RUNPATH: u64 = 29;

#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not an ELF file")]
    NotElf { path: PathBuf },
    #[error("{path}: malformed ELF: {what}")]
    Malformed { path: PathBuf, what: String },
    #[error("{path}: unsupported ELF machine {machine} (no OCI architecture for it)")]
    Machine { path: PathBuf, machine: u16 },
    #[error(
        "{path}: needs {library}, which is not in any search path ({searched}); install it or pass --library-path"
    )]
    Missing {
        path: PathBuf,
        library: String,
        searched: String,
    },
}

/// What the headers of one ELF file say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfInfo {
    pub is_64: bool,
    pub little_endian: bool,
    pub machine: u16,
    /// `PT_INTERP`, e.g. `/lib64/ld-linux-x86-64.so.2`; `None` for static binaries.
    pub interpreter: Option<String>,
    /// `DT_NEEDED` sonames, in file order.
    pub needed: Vec<String>,
    /// `DT_RPATH` entries (colon-split).
    pub rpath: Vec<String>,
    /// `DT_RUNPATH` entries (colon-split).
    pub runpath: Vec<String>,
}

impl ElfInfo {
    /// A binary with no interpreter and no needed libraries stands alone.
    pub fn is_static(&self) -> bool {
        self.interpreter.is_none() && self.needed.is_empty()
    }

    /// The OCI `architecture` (and `variant`) for this machine.
    pub fn oci_arch(&self) -> Option<(&'static str, Option<&'static str>)> {
        Some(match self.machine {
            3 => ("386", None),
            40 => ("arm", Some("v7")),
            62 => ("amd64", None),
            183 => ("arm64", Some("v8")),
            21 if self.little_endian => ("ppc64le", None),
            21 => ("ppc64", None),
            22 => ("s390x", None),
            243 if self.is_64 => ("riscv64", None),
            8 if self.little_endian => ("mipsle", None),
            _ => return None,
        })
    }

    fn compatible(&self, other: &ElfInfo) -> bool {
        self.is_64 == other.is_64
            && self.little_endian == other.little_endian
            && self.machine == other.machine
    }
}

/// Bytes at an offset: a file read where needed (a binary's headers are a few kilobytes of a
/// file of tens of megabytes), or a slice.
trait At {
    fn read_at(&self, off: u64, buf: &mut [u8]) -> std::io::Result<usize>;
    fn size(&self) -> u64;
}

/// A file's bytes held in memory.
struct Bytes<'a>(&'a [u8]);

impl At for Bytes<'_> {
    fn read_at(&self, off: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let start = usize::try_from(off).unwrap_or(usize::MAX).min(self.0.len());
        let n = buf.len().min(self.0.len() - start);
        buf[..n].copy_from_slice(&self.0[start..start + n]);
        Ok(n)
    }

    fn size(&self) -> u64 {
        self.0.len() as u64
    }
}

impl At for std::fs::File {
    fn read_at(&self, off: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match std::os::unix::fs::FileExt::read_at(self, &mut buf[filled..], off + filled as u64)
            {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }

    fn size(&self) -> u64 {
        self.metadata().map_or(0, |m| m.len())
    }
}

struct Reader<'a> {
    data: &'a dyn At,
    le: bool,
    path: &'a Path,
}

impl Reader<'_> {
    fn bad(&self, what: impl Into<String>) -> ElfError {
        ElfError::Malformed {
            path: self.path.to_path_buf(),
            what: what.into(),
        }
    }

    fn io(&self, source: std::io::Error) -> ElfError {
        ElfError::Read {
            path: self.path.to_path_buf(),
            source,
        }
    }

    fn bytes<const N: usize>(&self, off: u64) -> Result<[u8; N], ElfError> {
        let mut out = [0u8; N];
        let n = self.data.read_at(off, &mut out).map_err(|e| self.io(e))?;
        if n < N {
            return Err(self.bad(format!("offset {off:#x} beyond end of file")));
        }
        Ok(out)
    }

    fn u16(&self, off: u64) -> Result<u16, ElfError> {
        let b = self.bytes::<2>(off)?;
        Ok(if self.le {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        })
    }

    fn u32(&self, off: u64) -> Result<u32, ElfError> {
        let b = self.bytes::<4>(off)?;
        Ok(if self.le {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    fn u64(&self, off: u64) -> Result<u64, ElfError> {
        let b = self.bytes::<8>(off)?;
        Ok(if self.le {
            u64::from_le_bytes(b)
        } else {
            u64::from_be_bytes(b)
        })
    }

    /// A word: 8 bytes in ELF64, 4 in ELF32.
    fn word(&self, off: u64, is_64: bool) -> Result<u64, ElfError> {
        if is_64 {
            self.u64(off)
        } else {
            self.u32(off).map(u64::from)
        }
    }

    fn cstr(&self, off: u64, limit: u64) -> Result<String, ElfError> {
        let end = limit.min(self.data.size());
        if off > end {
            return Err(self.bad(format!("string at {off:#x} beyond end of file")));
        }
        let mut out = Vec::new();
        let mut at = off;
        let mut piece = [0u8; 256];
        while at < end {
            let want = piece.len().min((end - at) as usize);
            let n = self
                .data
                .read_at(at, &mut piece[..want])
                .map_err(|e| self.io(e))?;
            if n == 0 {
                break;
            }
            if let Some(nul) = piece[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&piece[..nul]);
                return Ok(String::from_utf8_lossy(&out).into_owned());
            }
            out.extend_from_slice(&piece[..n]);
            at += n as u64;
        }
        Err(self.bad(format!("unterminated string at {off:#x}")))
    }
}

struct Segment {
    kind: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
}

/// Parses the headers of an ELF file held in memory (`path` names it in errors).
pub fn parse(data: &[u8], path: &Path) -> Result<ElfInfo, ElfError> {
    parse_at(&Bytes(data), path)
}

/// Checks the ELF identification of `data`: its class (64-bit or not) and a reader in its byte
/// order. A file too short or without the magic number is not ELF; another class or encoding
/// than ELF's two is malformed.
fn identify<'a>(data: &'a dyn At, path: &'a Path) -> Result<(bool, Reader<'a>), ElfError> {
    let mut ident = [0u8; 6];
    let n = data
        .read_at(0, &mut ident)
        .map_err(|source| ElfError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    if data.size() < 52 || n < 6 || &ident[..4] != b"\x7fELF" {
        return Err(ElfError::NotElf {
            path: path.to_path_buf(),
        });
    }
    let is_64 = match ident[4] {
        1 => false,
        2 => true,
        c => {
            return Err(ElfError::Malformed {
                path: path.to_path_buf(),
                what: format!("unknown class {c}"),
            });
        }
    };
    let le = match ident[5] {
        1 => true,
        2 => false,
        d => {
            return Err(ElfError::Malformed {
                path: path.to_path_buf(),
                what: format!("unknown data encoding {d}"),
            });
        }
    };
    Ok((is_64, Reader { data, le, path }))
}

fn parse_at(data: &dyn At, path: &Path) -> Result<ElfInfo, ElfError> {
    let (is_64, r) = identify(data, path)?;
    let machine = r.u16(18)?;
    let (phoff, phentsize, phnum) = if is_64 {
        (r.u64(32)?, r.u16(54)?, r.u16(56)?)
    } else {
        (u64::from(r.u32(28)?), r.u16(42)?, r.u16(44)?)
    };
    let min_ent = if is_64 { 56 } else { 32 };
    if phnum > 0 && u64::from(phentsize) < min_ent {
        return Err(r.bad(format!("program header entry size {phentsize}")));
    }
    let mut segments = Vec::with_capacity(usize::from(phnum));
    for i in 0..u64::from(phnum) {
        let base = phoff
            .checked_add(i * u64::from(phentsize))
            .ok_or_else(|| r.bad("program header offset overflow"))?;
        let kind = r.u32(base)?;
        let seg = if is_64 {
            Segment {
                kind,
                offset: r.u64(base + 8)?,
                vaddr: r.u64(base + 16)?,
                filesz: r.u64(base + 32)?,
            }
        } else {
            Segment {
                kind,
                offset: u64::from(r.u32(base + 4)?),
                vaddr: u64::from(r.u32(base + 8)?),
                filesz: u64::from(r.u32(base + 16)?),
            }
        };
        segments.push(seg);
    }

    let mut info = ElfInfo {
        is_64,
        little_endian: r.le,
        machine,
        interpreter: None,
        needed: Vec::new(),
        rpath: Vec::new(),
        runpath: Vec::new(),
    };
    if let Some(interp) = segments.iter().find(|s| s.kind == PT_INTERP) {
        info.interpreter =
            Some(r.cstr(interp.offset, interp.offset.saturating_add(interp.filesz))?);
    }
    let Some(dynamic) = segments.iter().find(|s| s.kind == PT_DYNAMIC) else {
        return Ok(info);
    };

    // Read the dynamic entries, then resolve string offsets through the string table.
    let entsize = if is_64 { 16 } else { 8 };
    let mut entries = Vec::new();
    let (mut strtab, mut strsz) = (None, None);
    let count = dynamic.filesz / entsize;
    for i in 0..count {
        let off = dynamic.offset + i * entsize;
        let tag = r.word(off, is_64)?;
        let val = r.word(off + entsize / 2, is_64)?;
        match tag {
            DT_NULL => break,
            DT_STRTAB => strtab = Some(val),
            DT_STRSZ => strsz = Some(val),
            DT_NEEDED | DT_RPATH | DT_RUNPATH => entries.push((tag, val)),
            _ => {}
        }
    }
    if entries.is_empty() {
        return Ok(info);
    }
    let strtab_vaddr = strtab.ok_or_else(|| r.bad("dynamic section without DT_STRTAB"))?;
    let strtab_off = segments
        .iter()
        .filter(|s| s.kind == PT_LOAD)
        .find(|s| strtab_vaddr >= s.vaddr && strtab_vaddr < s.vaddr.saturating_add(s.filesz))
        .map(|s| strtab_vaddr - s.vaddr + s.offset)
        .ok_or_else(|| r.bad("DT_STRTAB is not inside a loaded segment"))?;
    let limit = strtab_off.saturating_add(strsz.unwrap_or(u64::MAX - strtab_off));
    for (tag, val) in entries {
        let s = r.cstr(strtab_off.saturating_add(val), limit)?;
        match tag {
            DT_NEEDED => info.needed.push(s),
            DT_RPATH => info.rpath.extend(s.split(':').map(str::to_string)),
            _ => info.runpath.extend(s.split(':').map(str::to_string)),
        }
    }
    Ok(info)
}

const SHT_NOBITS: u32 = 8;
const SHN_XINDEX: u64 = 0xffff;

/// [`file_section`] of bytes in memory (the tests' ELF files).
#[cfg(test)]
fn section(data: &[u8], path: &Path, name: &str, max: u64) -> Result<Option<Vec<u8>>, ElfError> {
    section_at(&Bytes(data), path, name, max)
}

/// The bytes of the section called `name` (cargo-auditable's `.dep-v0`, say) of `file`, or
/// `None` when it has none, reading only the headers, the names and the section itself.
/// Sections are not loaded at run time, so only the section headers name them; a section
/// larger than `max` bytes is refused as malformed.
pub fn file_section(
    file: &std::fs::File,
    path: &Path,
    name: &str,
    max: u64,
) -> Result<Option<Vec<u8>>, ElfError> {
    section_at(file, path, name, max)
}

fn section_at(
    data: &dyn At,
    path: &Path,
    name: &str,
    max: u64,
) -> Result<Option<Vec<u8>>, ElfError> {
    let (is_64, r) = identify(data, path)?;
    let file_size = data.size();
    let (shoff, shentsize, shnum, shstrndx) = if is_64 {
        (r.u64(40)?, r.u16(58)?, r.u16(60)?, r.u16(62)?)
    } else {
        (u64::from(r.u32(32)?), r.u16(46)?, r.u16(48)?, r.u16(50)?)
    };
    if shoff == 0 {
        return Ok(None);
    }
    let min_ent = if is_64 { 64 } else { 40 };
    if u64::from(shentsize) < min_ent {
        return Err(r.bad(format!("section header entry size {shentsize}")));
    }
    let header = |i: u64| -> Result<(u32, u32, u64, u64, u64), ElfError> {
        let base = shoff
            .checked_add(i * u64::from(shentsize))
            .ok_or_else(|| r.bad("section header offset overflow"))?;
        Ok(if is_64 {
            (
                r.u32(base)?,
                r.u32(base + 4)?,
                r.u64(base + 24)?,
                r.u64(base + 32)?,
                u64::from(r.u32(base + 40)?),
            )
        } else {
            (
                r.u32(base)?,
                r.u32(base + 4)?,
                u64::from(r.u32(base + 16)?),
                u64::from(r.u32(base + 20)?),
                u64::from(r.u32(base + 24)?),
            )
        })
    };
    // More than 0xff00 sections: the real count and string-table index are in section 0.
    let first = header(0)?;
    let count = if shnum == 0 {
        first.3
    } else {
        u64::from(shnum)
    };
    let strndx = if u64::from(shstrndx) == SHN_XINDEX {
        first.4
    } else {
        u64::from(shstrndx)
    };
    if count > file_size / u64::from(shentsize) || strndx >= count {
        return Err(r.bad(format!("{count} sections, names in section {strndx}")));
    }
    let (_, _, names_off, names_size, _) = header(strndx)?;
    let names_end = names_off.saturating_add(names_size);
    for i in 0..count {
        let (name_at, kind, offset, size, _) = header(i)?;
        if r.cstr(names_off.saturating_add(u64::from(name_at)), names_end)? != name {
            continue;
        }
        if kind == SHT_NOBITS {
            return Ok(Some(Vec::new()));
        }
        if size > max {
            return Err(r.bad(format!("section {name} is {size} bytes (at most {max})")));
        }
        if offset.checked_add(size).is_none_or(|end| end > file_size) {
            return Err(r.bad(format!("section {name} beyond end of file")));
        }
        let mut out = vec![0u8; size as usize];
        let got = data.read_at(offset, &mut out).map_err(|e| r.io(e))?;
        if got as u64 != size {
            return Err(r.bad(format!("section {name} beyond end of file")));
        }
        return Ok(Some(out));
    }
    Ok(None)
}

/// Reads and parses one file's headers (reading only the parts they point at).
pub fn read(path: &Path) -> Result<ElfInfo, ElfError> {
    let file = std::fs::File::open(path).map_err(|source| ElfError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_at(&file, path)
}

/// A binary's dynamic closure: image path → host file, for the interpreter and every library.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Closure {
    /// The interpreter path as the binary names it (where it must be in the image).
    pub interpreter: Option<String>,
    /// Absolute path inside the image → file on the host to copy there.
    pub files: BTreeMap<String, PathBuf>,
}

/// The directories ld.so searches after RPATH/RUNPATH: those in `<sysroot>/etc/ld.so.conf`
/// (following `include` globs), then the defaults for the word size.
pub fn system_search_dirs(sysroot: &Path, is_64: bool) -> Vec<String> {
    let mut dirs = Vec::new();
    read_ld_conf(sysroot, &sysroot.join("etc/ld.so.conf"), &mut dirs, 0);
    let defaults: &[&str] = if is_64 {
        &["/lib64", "/usr/lib64", "/lib", "/usr/lib"]
    } else {
        &["/lib32", "/usr/lib32", "/lib", "/usr/lib"]
    };
    for d in defaults {
        if !dirs.iter().any(|x| x == d) {
            dirs.push((*d).to_string());
        }
    }
    dirs
}

fn read_ld_conf(sysroot: &Path, file: &Path, out: &mut Vec<String>, depth: u32) {
    if depth > 8 {
        return;
    }
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(pattern) = line.strip_prefix("include") {
            for f in glob_files(sysroot, pattern.trim()) {
                read_ld_conf(sysroot, &f, out, depth + 1);
            }
        } else if line.starts_with('/') && !out.iter().any(|d| d == line) {
            out.push(line.to_string());
        }
    }
}

/// Expands a `dir/prefix*suffix` pattern (the only form ld.so.conf uses in practice), sorted.
fn glob_files(sysroot: &Path, pattern: &str) -> Vec<PathBuf> {
    let full = sysroot.join(pattern.trim_start_matches('/'));
    let (Some(dir), Some(name)) = (full.parent(), full.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    let Some((prefix, suffix)) = name.split_once('*') else {
        return vec![full.clone()];
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(suffix))
        })
        .map(|e| e.path())
        .collect();
    files.sort();
    files
}

/// Resolves `.` and `..` in an absolute path without touching the filesystem, so
/// `$ORIGIN/../lib` gives a clean path inside the image.
pub fn lexical_normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

fn expand_origin(entry: &str, origin: &str) -> String {
    entry
        .replace("${ORIGIN}", origin)
        .replace("$ORIGIN", origin)
}

/// Finds the shared-library closure of `binary` against the host filesystem under `sysroot`
/// (normally `/`). `extra_dirs` are searched before the system directories.
pub fn closure(binary: &Path, sysroot: &Path, extra_dirs: &[String]) -> Result<Closure, ElfError> {
    let root = read(binary)?;
    let mut out = Closure {
        interpreter: root.interpreter.clone(),
        files: BTreeMap::new(),
    };
    if let Some(interp) = &root.interpreter {
        let host = sysroot.join(interp.trim_start_matches('/'));
        if !host.exists() {
            return Err(ElfError::Missing {
                path: binary.to_path_buf(),
                library: interp.clone(),
                searched: "the program interpreter path".into(),
            });
        }
        out.files.insert(interp.clone(), host);
    }
    let system = system_search_dirs(sysroot, root.is_64);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    // (object path on host, its info, RPATHs inherited from the loading chain)
    let mut queue: Vec<(PathBuf, ElfInfo, Vec<String>)> =
        vec![(binary.to_path_buf(), root.clone(), Vec::new())];
    while let Some((obj, info, inherited)) = queue.pop() {
        let origin = obj
            .parent()
            .map(|p| {
                let p = p.strip_prefix(sysroot).unwrap_or(p);
                format!("/{}", p.display()).replace("//", "/")
            })
            .unwrap_or_else(|| "/".into());
        // RPATH applies (to this object and the ones it loads) only when it has no RUNPATH.
        let mut rpaths = inherited.clone();
        if info.runpath.is_empty() {
            rpaths.extend(info.rpath.iter().map(|e| expand_origin(e, &origin)));
        }
        let runpaths: Vec<String> = info
            .runpath
            .iter()
            .map(|e| expand_origin(e, &origin))
            .collect();
        for lib in &info.needed {
            if seen.contains(lib) {
                continue;
            }
            let dirs: Vec<&String> = rpaths
                .iter()
                .chain(extra_dirs.iter())
                .chain(runpaths.iter())
                .chain(system.iter())
                .collect();
            let found = if lib.contains('/') {
                let host = sysroot.join(lib.trim_start_matches('/'));
                read(&host)
                    .ok()
                    .filter(|i| i.compatible(&root))
                    .map(|i| (lib.clone(), host, i))
            } else {
                dirs.iter().find_map(|d| {
                    let image_path = lexical_normalize(&format!("{d}/{lib}"));
                    let host = sysroot.join(image_path.trim_start_matches('/'));
                    if !host.is_file() {
                        return None;
                    }
                    read(&host)
                        .ok()
                        .filter(|i| i.compatible(&root))
                        .map(|i| (image_path, host, i))
                })
            };
            let Some((image_path, host, lib_info)) = found else {
                return Err(ElfError::Missing {
                    path: obj.clone(),
                    library: lib.clone(),
                    searched: dirs
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(":"),
                });
            };
            seen.insert(lib.clone());
            // The interpreter often appears as a needed library too; keep one copy.
            if out.interpreter.as_deref() != Some(image_path.as_str()) {
                out.files.insert(image_path, host.clone());
            }
            // The loader inherits the executable's RPATH for everything it loads.
            let inherit = if obj == binary {
                rpaths.clone()
            } else {
                inherited.clone()
            };
            queue.push((host, lib_info, inherit));
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn non_elf_and_truncated_files_are_errors_not_panics() {
        let p = Path::new("x");
        assert!(matches!(parse(b"hello", p), Err(ElfError::NotElf { .. })));
        let mut data = b"\x7fELF\x02\x01\x01".to_vec();
        data.resize(64, 0);
        // phoff points far beyond the file.
        data[32..40].copy_from_slice(&0xFFFF_FFFFu64.to_le_bytes());
        data[54..56].copy_from_slice(&56u16.to_le_bytes());
        data[56..58].copy_from_slice(&3u16.to_le_bytes());
        assert!(matches!(parse(&data, p), Err(ElfError::Malformed { .. })));
        for len in 0..data.len() {
            let _ = parse(&data[..len], p);
        }
    }

    #[test]
    fn reads_a_real_dynamic_binary() {
        let bin = Path::new("/bin/true");
        if !bin.exists() {
            return;
        }
        let info = read(bin).unwrap();
        assert!(info.oci_arch().is_some());
        if info.is_static() {
            return;
        }
        assert!(
            info.needed.iter().any(|n| n.starts_with("libc.so")),
            "{info:?}"
        );
        let c = closure(bin, Path::new("/"), &[]).unwrap();
        let interp = c.interpreter.clone().unwrap();
        assert!(c.files.contains_key(&interp));
        assert!(c.files.keys().any(|k| k.ends_with("/libc.so.6")), "{c:?}");
    }

    /// A minimal little-endian ELF64 file with the given sections (and a section-name table).
    pub(crate) fn tiny_elf(sections: &[(&str, &[u8])]) -> Vec<u8> {
        let mut names = vec![0u8];
        let mut data = Vec::new();
        let mut headers: Vec<(u32, u32, u64, u64)> = vec![(0, 0, 0, 0)];
        for (name, bytes) in sections {
            headers.push((
                names.len() as u32,
                1,
                64 + data.len() as u64,
                bytes.len() as u64,
            ));
            names.extend_from_slice(name.as_bytes());
            names.push(0);
            data.extend_from_slice(bytes);
        }
        let strtab_name = names.len() as u32;
        names.extend_from_slice(b".shstrtab\0");
        headers.push((strtab_name, 3, 64 + data.len() as u64, names.len() as u64));
        data.extend_from_slice(&names);
        let shoff = 64 + data.len() as u64;
        let mut out = vec![0u8; 64];
        out[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
        out[16..18].copy_from_slice(&2u16.to_le_bytes());
        out[18..20].copy_from_slice(&62u16.to_le_bytes());
        out[40..48].copy_from_slice(&shoff.to_le_bytes());
        out[58..60].copy_from_slice(&64u16.to_le_bytes());
        out[60..62].copy_from_slice(&(headers.len() as u16).to_le_bytes());
        out[62..64].copy_from_slice(&((headers.len() - 1) as u16).to_le_bytes());
        out.extend_from_slice(&data);
        for (name, kind, offset, size) in headers {
            let mut h = [0u8; 64];
            h[0..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[24..32].copy_from_slice(&offset.to_le_bytes());
            h[32..40].copy_from_slice(&size.to_le_bytes());
            out.extend_from_slice(&h);
        }
        out
    }

    #[test]
    fn sections_are_found_by_name_and_bounded() {
        let p = Path::new("/bin/x");
        let elf = tiny_elf(&[(".text", b"code"), (".dep-v0", b"payload")]);
        assert_eq!(
            section(&elf, p, ".dep-v0", 100).unwrap().as_deref(),
            Some(&b"payload"[..])
        );
        assert_eq!(section(&elf, p, ".nope", 100).unwrap(), None);
        let e = section(&elf, p, ".dep-v0", 3).unwrap_err().to_string();
        assert!(
            e.starts_with("/bin/x: malformed ELF: section .dep-v0 is 7 bytes"),
            "{e}"
        );
        assert!(matches!(
            section(b"text", p, ".x", 9),
            Err(ElfError::NotElf { .. })
        ));
        // Every truncation is an error or an answer, never a panic.
        for len in 0..elf.len() {
            let _ = section(&elf[..len], p, ".dep-v0", 100);
        }
        // A section that points past the end of the file.
        let mut bad = elf.clone();
        let shoff = u64::from_le_bytes(bad[40..48].try_into().unwrap()) as usize;
        bad[shoff + 2 * 64 + 24..shoff + 2 * 64 + 32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(section(&bad, p, ".dep-v0", 100).is_err());
    }

    #[test]
    fn origin_is_expanded() {
        assert_eq!(
            expand_origin("$ORIGIN/../lib", "/opt/app/bin"),
            "/opt/app/bin/../lib"
        );
        assert_eq!(expand_origin("${ORIGIN}/x", "/a"), "/a/x");
        assert_eq!(lexical_normalize("/opt/app/bin/../lib/"), "/opt/app/lib");
    }
}
