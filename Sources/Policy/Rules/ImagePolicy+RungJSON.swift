import Support

extension ImagePolicy {
    /// A rule's `"rung"`: `"smallest"`, `"covering"` or `"widest"` (with `show-cached`), or an
    /// object `{"covering", "maxWidth", "maxBytes", "within"}` (with `load`).
    static func rungSelection(_ value: JSONValue, reader: JSONObjectReader) throws(DataFileError) -> RungSelection {
        let actionValue = reader.value("action")
        let actionName = try reader.requiredString("action")
        if let variant = reader.value("variant") {
            throw reader.error("a rule with a \"rung\" takes no \"variant\": the rung chosen is what it loads or shows", at: variant)
        }
        switch (actionName, value.kind) {
        case ("load", .string("smallest")):
            return .load(.smallest)
        case ("load", .object):
            let members = try JSONObjectReader(value, source: reader.source, context: reader.context, what: "\"rung\"",
                                               keys: ["covering", "maxWidth", "maxBytes", "within"])
            var factor = 1.0
            if let factorValue = members.value("covering") {
                guard case .number(let text) = factorValue.kind, let number = Double(text), number.isFinite,
                      number >= RungChoice.minimumFactor, number <= RungChoice.maximumFactor else {
                    let found: String
                    if case .number(let text) = factorValue.kind { found = text.count > 24 ? String(text.prefix(24)) + "…" : text } else { found = factorValue.typeDescription }
                    throw members.error("\"covering\" must be a factor from \(RungChoice.minimumFactor) to \(RungChoice.maximumFactor) "
                                        + "(1 is the display width), found \(found)", at: factorValue)
                }
                factor = number
            }
            let maxWidth = try members.wholeNumber("maxWidth", in: 1...ImageItem.maximumWidth, unit: "pixels")
            let maxBytes = try members.wholeNumber("maxBytes", in: 1...RungChoice.maximumBytes, unit: "bytes")
            let within = try members.wholeNumber("within", in: 1...60_000, unit: "milliseconds").map { Duration.milliseconds($0) }
            return .load(RungChoice(covering: factor, maxWidth: maxWidth, maxBytes: maxBytes, within: within))
        case ("show-cached", .string(let text)):
            guard let choice = CachedRungChoice(rawValue: text) else {
                throw reader.error("a show-cached rule's \"rung\" must be \"covering\" or \"widest\", found \(JSONWriter.quoted(text))", at: value)
            }
            return .showCached(choice)
        case ("load", _):
            throw reader.error("a load rule's \"rung\" must be \"smallest\" or an object {\"covering\", \"maxWidth\", \"maxBytes\", "
                               + "\"within\"}, found \(value.typeDescription)", at: value)
        case ("show-cached", _):
            throw reader.error("a show-cached rule's \"rung\" must be \"covering\" or \"widest\", found \(value.typeDescription)", at: value)
        default:
            throw reader.error("a \"rung\" goes with the action \"load\" or \"show-cached\", not \(JSONWriter.quoted(actionName))", at: actionValue)
        }
    }

    /// A case's ladder: `"ladder"` (widths, or `{"width", "bytes"}` objects), `"displayWidth"`,
    /// `"cachedWidths"` and the expected `"rungWidth"` (null for the placeholder); nil for a case
    /// without `"ladder"`, which may then use none of the others.
    static func caseLadder(reader: JSONObjectReader, expect: JSONObjectReader) throws(DataFileError) -> PolicyCase.Ladder? {
        guard let rungValues = try reader.array("ladder") else {
            for key in ["displayWidth", "cachedWidths"] where reader.value(key) != nil {
                throw reader.error("\"\(key)\" describes a ladder, but the case gives no \"ladder\"", at: reader.value(key))
            }
            if let value = expect.value("rungWidth") {
                throw expect.error("\"rungWidth\" expects a rung, but the case gives no \"ladder\"", at: value)
            }
            return nil
        }
        for key in ["cached", "hasThumbnail", "thumbnailCoversDisplay"] where reader.value(key) != nil {
            throw reader.error("a case with a \"ladder\" says what is cached with \"cachedWidths\"; \"\(key)\" is for a case without one",
                               at: reader.value(key))
        }
        var rungs: [ImageRung] = []
        for (position, element) in rungValues.enumerated() {
            let name = "\"ladder\" entry \(position + 1)"
            var width: Int, bytes: Int?
            if case .object = element.kind {
                let rung = try JSONObjectReader(element, source: reader.source, context: reader.context, what: name, keys: ["width", "bytes"])
                guard let given = try rung.wholeNumber("width", in: 1...ImageItem.maximumWidth, unit: "pixels") else {
                    throw rung.error("\(name) has no \"width\"")
                }
                width = given
                bytes = try rung.wholeNumber("bytes", in: 1...(1 << 40), unit: "bytes")
            } else {
                width = try reader.wholeNumber(element, named: name, in: 1...ImageItem.maximumWidth, unit: "pixels")
            }
            // Each rung gets a URL of its own on a reserved name (RFC 2606), never fetched.
            guard let url = ImageURL("https://case.invalid/\(width).jpg") else { throw reader.error("\(name): no URL for it", at: element) }
            rungs.append(ImageRung(url: url, width: width, bytes: bytes))
        }
        let ladder: ImageLadder
        do { ladder = try ImageLadder(rungs: rungs) } catch { throw reader.error("\"ladder\": \(error.description)", at: reader.value("ladder")) }
        let displayWidth = try reader.wholeNumber("displayWidth", in: 1...ImageItem.maximumWidth, unit: "pixels")
        var cached: [Int] = []
        for element in try reader.array("cachedWidths") ?? [] {
            let width = try reader.wholeNumber(element, named: "\"cachedWidths\" entry", in: 1...ImageItem.maximumWidth, unit: "pixels")
            guard ladder.rungs.contains(where: { $0.width == width }) else {
                throw reader.error("\"cachedWidths\" names \(width), which is not a width of the case's \"ladder\"", at: element)
            }
            guard !cached.contains(width) else { throw reader.error("\"cachedWidths\" names \(width) twice", at: element) }
            cached.append(width)
        }
        var expected = PolicyCase.Ladder.ExpectedRung.notChecked
        if let value = expect.value("rungWidth") {
            if case .null = value.kind {
                expected = .placeholder
            } else {
                let width = try expect.wholeNumber(value, named: "\"rungWidth\"", in: 1...ImageItem.maximumWidth, unit: "pixels")
                guard ladder.rungs.contains(where: { $0.width == width }) else {
                    throw expect.error("\"rungWidth\" is \(width), which is not a width of the case's \"ladder\"", at: value)
                }
                expected = .width(width)
            }
        }
        if let variant = expect.value("variant") {
            throw expect.error("a case with a \"ladder\" expects a \"rungWidth\", not a \"variant\"", at: variant)
        }
        let actionValue = expect.value("action")
        let action = try expect.string("action").map { name throws(DataFileError) -> ActionKind in
            guard let kind = ActionKind(rawValue: name) else {
                throw expect.error("unknown action \"\(name)\" (expected \(quotedList(ActionKind.allCases.map(\.rawValue))))", at: actionValue)
            }
            return kind
        }
        if case .placeholder = expected, let action, action != .placeholder {
            throw expect.error("\"rungWidth\" is null (the placeholder) but \"action\" is \"\(action)\"", at: actionValue)
        }
        if case .width = expected, action == .placeholder {
            throw expect.error("\"action\" is \"placeholder\" but \"rungWidth\" names a rung", at: actionValue)
        }
        if case .notChecked = expected, action == nil, expect.value("rule") == nil {
            throw expect.error("a case with a \"ladder\" must expect a \"rungWidth\", an \"action\" or a \"rule\"")
        }
        return PolicyCase.Ladder(ladder: ladder, displayWidth: displayWidth, cachedWidths: cached, expectedAction: action,
                                 expectedRung: expected)
    }
}
