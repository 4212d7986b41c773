import CQREncode

/// A QR code as an SVG image, drawn by libqrencode: what a browser shows for a phone to scan.
enum QRCodeSVG {
    /// `text` as a QR code (error correction M, four modules of quiet zone); nil when it is too long
    /// for a QR code.
    static func encoding(_ text: String) -> String? {
        guard let symbol = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        let modules = UnsafeBufferPointer(start: symbol.pointee.data, count: width * width)
        let quietZone = 4
        // One path: a rectangle for each horizontal run of dark modules (bit 0 of each module's byte).
        var path = ""
        for row in 0..<width {
            var column = 0
            while column < width {
                guard modules[row * width + column] & 1 == 1 else { column += 1; continue }
                let start = column
                while column < width, modules[row * width + column] & 1 == 1 { column += 1 }
                path += "M\(start + quietZone) \(row + quietZone)h\(column - start)v1h-\(column - start)z"
            }
        }
        let size = width + 2 * quietZone
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(size) \(size)" shape-rendering="crispEdges">\
            <rect width="\(size)" height="\(size)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>
            """
    }
}
