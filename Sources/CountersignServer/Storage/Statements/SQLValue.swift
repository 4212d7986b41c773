import Foundation

/// A value bound to a statement or read from a row, as the schema's columns hold them: TEXT, BIGINT
/// (INTEGER), BOOLEAN, TIMESTAMPTZ and BLOB columns, and NULL. SQLite keeps a boolean as an integer and a
/// time as Unix seconds (a REAL); PostgreSQL has types of its own for both.
enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case boolean(Bool)
    case date(Date)
    case blob([UInt8])
}

/// A Swift value a statement binds.
protocol SQLBindable: Sendable {
    var sqlValue: SQLValue { get }
}

/// A Swift value a row's column is read as (`DatabaseRow.decode(_:as:)`).
protocol SQLColumnDecodable {
    /// Nil when `value` is not one this type reads.
    init?(sqlValue value: SQLValue)
}

extension SQLValue: SQLBindable {
    var sqlValue: SQLValue { self }
}

extension String: SQLBindable, SQLColumnDecodable {
    var sqlValue: SQLValue { .text(self) }
    init?(sqlValue value: SQLValue) {
        guard case .text(let text) = value else { return nil }
        self = text
    }
}

extension Int64: SQLBindable, SQLColumnDecodable {
    var sqlValue: SQLValue { .integer(self) }
    init?(sqlValue value: SQLValue) {
        switch value {
        case .integer(let integer): self = integer
        // SQLite answers `sum` over no rows, say, as a REAL only when asked to; an integral one reads.
        case .real(let real) where real.rounded() == real: self = Int64(real)
        default: return nil
        }
    }
}

extension Int: SQLBindable, SQLColumnDecodable {
    var sqlValue: SQLValue { .integer(Int64(self)) }
    init?(sqlValue value: SQLValue) {
        guard let integer = Int64(sqlValue: value) else { return nil }
        self = Int(integer)
    }
}

extension Double: SQLBindable, SQLColumnDecodable {
    var sqlValue: SQLValue { .real(self) }
    init?(sqlValue value: SQLValue) {
        switch value {
        case .real(let real): self = real
        case .integer(let integer): self = Double(integer)
        default: return nil
        }
    }
}

extension Bool: SQLBindable, SQLColumnDecodable {
    var sqlValue: SQLValue { .boolean(self) }
    init?(sqlValue value: SQLValue) {
        switch value {
        case .boolean(let boolean): self = boolean
        case .integer(let integer): self = integer != 0
        default: return nil
        }
    }
}

extension Date: SQLBindable, SQLColumnDecodable {
    var sqlValue: SQLValue { .date(self) }
    init?(sqlValue value: SQLValue) {
        switch value {
        case .date(let date): self = date
        case .real(let seconds): self = Date(timeIntervalSince1970: seconds)
        case .integer(let seconds): self = Date(timeIntervalSince1970: Double(seconds))
        default: return nil
        }
    }
}

extension Data: SQLBindable, SQLColumnDecodable {
    var sqlValue: SQLValue { .blob([UInt8](self)) }
    init?(sqlValue value: SQLValue) {
        guard case .blob(let bytes) = value else { return nil }
        self = Data(bytes)
    }
}

extension Optional: SQLBindable where Wrapped: SQLBindable {
    var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

extension Optional: SQLColumnDecodable where Wrapped: SQLColumnDecodable {
    init?(sqlValue value: SQLValue) {
        if value == .null {
            self = .none
        } else if let wrapped = Wrapped(sqlValue: value) {
            self = .some(wrapped)
        } else {
            return nil
        }
    }
}

/// A string enum binds and reads as its raw value.
extension SQLBindable where Self: RawRepresentable, RawValue == String {
    var sqlValue: SQLValue { .text(rawValue) }
}

extension SQLColumnDecodable where Self: RawRepresentable, RawValue == String {
    init?(sqlValue value: SQLValue) {
        guard let text = String(sqlValue: value) else { return nil }
        self.init(rawValue: text)
    }
}
